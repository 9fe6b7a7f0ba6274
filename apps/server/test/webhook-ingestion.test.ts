import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpWorld } from './support/demo-world.js';
import { completedWorkflowRunExample } from './support/github-examples.js';
import { type Harness, startHarness } from './support/harness.js';

/** `POST /webhooks/github`: strict verification, then store; bad input never stores or 500s. */
describe('webhook ingestion', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    await setUpWorld(h);
  });
  afterAll(async () => {
    await h.close();
  });

  const sign = (secret: string, body: string) =>
    `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  const post = (body: string, headers: Record<string, string>) =>
    fetch(`${h.url}/webhooks/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
  const appHeaders = (event: string, body: string, secret = h.sim.app.webhookSecret) => ({
    'x-github-event': event,
    'x-github-delivery': randomUUID(),
    'x-github-hook-id': String(h.sim.app.hookId),
    'x-github-hook-installation-target-type': 'integration',
    'x-github-hook-installation-target-id': String(h.sim.app.id),
    'x-hub-signature-256': sign(secret, body),
  });
  const counts = async () => ({
    events: (await h.zekt.store.db.selectFrom('events').select('event_id').execute()).length,
    guids: (await h.zekt.store.db.selectFrom('webhook_receipts').select('delivery_guid').execute()).length,
  });
  const completed = completedWorkflowRunExample();

  async function problem(response: Response, status: number, code: string) {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(await response.json()).toMatchObject({ status, code });
  }

  it('refuses unsigned and wrongly signed webhooks with 401 and stores nothing', async () => {
    const before = await counts();
    const body = JSON.stringify(completed);
    const { 'x-hub-signature-256': _, ...unsigned } = appHeaders('workflow_run', body);
    await problem(await post(body, unsigned), 401, 'invalid_signature');
    await problem(
      await post(body, appHeaders('workflow_run', body, 'not-the-secret')),
      401,
      'invalid_signature',
    );
    // A valid signature over other bytes does not count either.
    await problem(await post(`${body} `, appHeaders('workflow_run', body)), 401, 'invalid_signature');
    // A hook Zekt placed is verified with that hook's secret only, not the App's.
    const hook = await h.zekt.store.db
      .selectFrom('repository_hooks')
      .select('hook_id')
      .executeTakeFirstOrThrow();
    await problem(
      await post(body, { ...appHeaders('workflow_run', body), 'x-github-hook-id': String(hook.hook_id) }),
      401,
      'invalid_signature',
    );
    expect(await counts()).toEqual(before);
  });

  it('answers malformed JSON with 400, non-JSON bodies with 415, and missing headers with 400', async () => {
    const before = await counts();
    const bad = '{"action": "completed", ';
    await problem(await post(bad, appHeaders('workflow_run', bad)), 400, 'malformed_webhook');
    const form = `payload=${encodeURIComponent('{}')}`;
    await problem(
      await fetch(`${h.url}/webhooks/github`, {
        method: 'POST',
        headers: { ...appHeaders('push', form), 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
      }),
      415,
      'unsupported_media_type',
    );
    const { 'x-github-delivery': _, ...noGuid } = appHeaders('push', '{}');
    await problem(await post('{}', noGuid), 400, 'malformed_webhook');
    expect(await counts()).toEqual(before);
  });

  it('acknowledges uninteresting events with 202 and pings with 200', async () => {
    const push = JSON.stringify({ ref: 'refs/heads/main' });
    const ignored = await post(push, appHeaders('push', push));
    expect(ignored.status).toBe(202);
    expect(await ignored.json()).toMatchObject({ outcome: 'ignored' });
    const ping = JSON.stringify({ zen: 'Design for failure.', hook_id: h.sim.app.hookId });
    const pong = await post(ping, appHeaders('ping', ping));
    expect(pong.status).toBe(200);
    // workflow_run through the App webhook is not a provider event (only Zekt's repository hooks are).
    const body = JSON.stringify(completed);
    const appRun = await post(body, appHeaders('workflow_run', body));
    expect(appRun.status).toBe(202);
    expect(await appRun.json()).toMatchObject({ outcome: 'ignored' });
  });

  it('ignores non-completed runs and answers 400 when a signed workflow_run lacks what Zekt needs', async () => {
    const before = await counts();
    const requested = await h.sim.sendRepositoryWebhook('acme/api', 'workflow_run', {
      ...completed,
      action: 'requested',
    });
    expect(requested.map((d) => d.status)).toEqual([202]);
    const broken = await h.sim.sendRepositoryWebhook('acme/api', 'workflow_run', {
      ...completed,
      workflow_run: { ...(completed.workflow_run as object), id: 'not-a-number' },
    });
    expect(broken.map((d) => d.status)).toEqual([400]);
    expect((await counts()).events).toBe(before.events);
  });

  it('does not remember a malformed installation event as processed (found by fuzzing)', async () => {
    const guid = randomUUID();
    const send = (payload: unknown) => {
      const body = JSON.stringify(payload);
      return post(body, { ...appHeaders('installation', body), 'x-github-delivery': guid });
    };
    const before = await counts();
    await problem(await send({ action: 'created', installation: { id: 4242 } }), 400, 'malformed_webhook');
    expect(await counts()).toEqual(before);
    const fixed = await send({
      action: 'created',
      installation: { id: 4242, account: { id: 4242, login: 'later-fixed', type: 'Organization' } },
      repositories: [],
      sender: { id: 4243, login: 'fixer' },
    });
    expect(fixed.status).toBe(200);
    expect(await fixed.json()).toMatchObject({ outcome: 'applied' });
  });

  it("keys an App webhook's idempotency on the App, not on the X-GitHub-Hook-ID its signature does not cover", async () => {
    const body = JSON.stringify({
      action: 'created',
      installation: { id: 4343, account: { id: 4343, login: 'replayed', type: 'Organization' } },
      repositories: [],
      sender: { id: 4344, login: 'someone' },
    });
    const headers = appHeaders('installation', body);
    const first = await post(body, headers);
    expect(await first.json()).toMatchObject({ outcome: 'applied' });
    // The same signed bytes replayed under another hook id: the signature still matches (it covers
    // the body only), and it is still the one App webhook's delivery — a duplicate.
    const replayed = await post(body, { ...headers, 'x-github-hook-id': '1' });
    expect(replayed.status).toBe(200);
    expect(await replayed.json()).toMatchObject({ outcome: 'duplicate' });
  });

  it('counts the same run key from two deliveries once', async () => {
    const run = await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    const again = await h.sim.sendRepositoryWebhook('acme/api', 'workflow_run', run.webhooks[0]!.payload);
    expect(again.map((d) => d.status)).toEqual([200]);
    expect(JSON.parse(again[0]!.responseBody ?? '{}')).toMatchObject({ outcome: 'duplicate' });
    const events = await h.zekt.store.db
      .selectFrom('events')
      .selectAll()
      .where('run_id', '=', run.run.id)
      .execute();
    expect(events).toHaveLength(1);
  });
});
