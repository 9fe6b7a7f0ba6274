import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, installationToken, manualClock } from '../test/support/github-client.js';
import { type Receiver, startReceiver } from '../test/support/http-receiver.js';
import { createTestSimulator } from '../test/support/test-simulator.js';
import type { GitHubSimulator } from './index.js';

/**
 * Dropped webhooks: GitHub records a delivery its receiver never got and lists it under the hook's
 * deliveries; it sends it again only when asked (`POST …/attempts`), under the same GUID.
 */
let sim: GitHubSimulator;
let receiver: Receiver;
const clock = manualClock();
let token: string;
let hookId: number;
let installationId: number;

async function control(method: string, path: string, body?: unknown) {
  const response = await fetch(`${sim.url}/_sim${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
}

beforeAll(async () => {
  receiver = await startReceiver();
  sim = await createTestSimulator({ clock, allowPrivateHookUrls: true });
  const { installation } = await sim.createInstallation({
    account: { login: 'acme' },
    repositories: ['api'],
  });
  installationId = installation.id;
  token = `token ${await installationToken(sim, installation.id, {}, Math.floor(clock.now().getTime() / 1000))}`;
  const hook = await api(sim, 'POST', '/repos/acme/api/hooks', {
    authorization: token,
    body: {
      config: { url: `${receiver.url}/hook`, content_type: 'json', secret: 's' },
      events: ['workflow_run'],
    },
  });
  hookId = (hook.body as { id: number }).id;
});
afterAll(async () => {
  await sim.close();
  await receiver.close();
});

describe('dropping webhooks', () => {
  it('refuses malformed drop rules over the control API, naming the field', async () => {
    for (const [rule, field] of [
      [{ event: 'Workflow Run' }, 'event'],
      [{ repository: 'acme' }, 'repository'],
      [{ hookType: 'org' }, 'hookType'],
      [{ hookId: 0 }, 'hookId'],
      [{ count: 0 }, 'count'],
      [{ status: 200 }, 'status'],
    ] as const) {
      const answer = await control('POST', '/webhook-drops', rule);
      expect(answer.status).toBe(400);
      expect((answer.body as { error: string }).error).toContain(field);
    }
    expect((await control('DELETE', '/webhook-drops/drop-999')).status).toBe(400);
  });

  it('records a dropped delivery as failed, lists it, and redelivers it under its GUID when asked', async () => {
    const created = await control('POST', '/webhook-drops', {
      event: 'workflow_run',
      repository: 'acme/api',
    });
    expect(created.status).toBe(201);
    const { webhooks } = await sim.runWorkflow({ repository: 'acme/api', workflow: 'ci.yml' });
    const [dropped] = webhooks;
    expect(dropped).toMatchObject({ status: null, error: 'failed to connect', droppedBy: 'drop-1' });
    expect(receiver.requests.filter((r) => r.headers['x-github-event'] === 'workflow_run')).toHaveLength(0);
    expect(await control('GET', '/webhook-drops')).toMatchObject({
      body: [{ id: 'drop-1', remaining: 0, dropped: 1 }],
    });

    const listed = await api(sim, 'GET', `/repos/acme/api/hooks/${hookId}/deliveries`, {
      authorization: token,
    });
    expect(listed.status).toBe(200);
    const items = listed.body as Array<Record<string, unknown>>;
    expect(items[0]).toMatchObject({
      id: dropped?.id,
      guid: dropped?.guid,
      status: 'failed to connect',
      status_code: 0,
      redelivery: false,
      event: 'workflow_run',
      action: 'completed',
    });
    // GitHub's `failure` filter is status codes 400–599: a delivery that got no answer is not in it.
    const failures = await api(sim, 'GET', `/repos/acme/api/hooks/${hookId}/deliveries?status=failure`, {
      authorization: token,
    });
    expect((failures.body as unknown[]).length).toBe(0);

    const again = await api(
      sim,
      'POST',
      `/repos/acme/api/hooks/${hookId}/deliveries/${dropped?.id}/attempts`,
      {
        authorization: token,
      },
    );
    expect(again).toMatchObject({ status: 202, body: {} });
    const redelivered = await receiver.waitFor((r) => r.headers['x-github-event'] === 'workflow_run');
    expect(redelivered.headers['x-github-delivery']).toBe(dropped?.guid);
    const after = (
      await api(sim, 'GET', `/repos/acme/api/hooks/${hookId}/deliveries`, { authorization: token })
    ).body as Array<Record<string, unknown>>;
    expect(after[0]).toMatchObject({ guid: dropped?.guid, status: 'OK', status_code: 200, redelivery: true });
    expect(after[0]?.id).not.toBe(dropped?.id);
  });

  it('records a drop with a status as that answer, and forgets deliveries older than 3 days', async () => {
    sim.dropWebhooks({ hookType: 'repository', status: 503, count: 1 });
    const { webhooks } = await sim.runWorkflow({ repository: 'acme/api', workflow: 'ci.yml' });
    expect(webhooks[0]).toMatchObject({ status: 503, error: null });
    const failures = await api(sim, 'GET', `/repos/acme/api/hooks/${hookId}/deliveries?status=failure`, {
      authorization: token,
    });
    expect(failures.body).toMatchObject([{ guid: webhooks[0]?.guid, status: 'Invalid HTTP Response: 503' }]);

    clock.advanceSeconds(3 * 24 * 3600 + 1);
    const later = `token ${await installationToken(sim, installationId, {}, Math.floor(clock.now().getTime() / 1000))}`;
    const old = await api(sim, 'GET', `/repos/acme/api/hooks/${hookId}/deliveries`, { authorization: later });
    expect(old).toMatchObject({ status: 200, body: [] });
  });
});

describe('dropping the webhooks of one hook', () => {
  it('drops one hook of a repository, whose other hook receives the same event under the same GUID', async () => {
    const own = await createTestSimulator({ allowPrivateHookUrls: true });
    const ownReceiver = await startReceiver();
    try {
      const { installation } = await own.createInstallation({
        account: { login: 'initech' },
        repositories: ['tps'],
      });
      const auth = `token ${await installationToken(own, installation.id)}`;
      const hookIds: number[] = [];
      for (const path of ['/provider', '/completion']) {
        const hook = await api(own, 'POST', '/repos/initech/tps/hooks', {
          authorization: auth,
          body: {
            config: { url: `${ownReceiver.url}${path}`, content_type: 'json', secret: 's' },
            events: ['workflow_run'],
          },
        });
        hookIds.push((hook.body as { id: number }).id);
      }
      own.dropWebhooks({ event: 'workflow_run', hookId: hookIds[1] ?? 0 });
      const { webhooks } = await own.runWorkflow({ repository: 'initech/tps', workflow: 'ci.yml' });
      expect(webhooks.map((d) => [d.hookId, d.status])).toEqual([
        [hookIds[0], 200],
        [hookIds[1], null],
      ]);
      expect(webhooks[1]?.guid).toBe(webhooks[0]?.guid);
      const runs = ownReceiver.requests.filter((r) => r.headers['x-github-event'] === 'workflow_run');
      expect(runs.map((r) => r.path)).toEqual(['/provider']);
    } finally {
      await own.close();
      await ownReceiver.close();
    }
  });
});
