import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DispatchRecord } from 'zekt-github-sim';
import { setUpWorld, type World } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';

/**
 * The routing pipeline on the real service and simulator: completion webhook + message in,
 * repository_dispatch out.
 */
describe('routing pipeline', () => {
  let h: Harness;
  let world: World;
  beforeEach(async () => {
    h = await startHarness({ transport: 'inject' });
    world = await setUpWorld(h);
  });
  afterEach(async () => {
    await h.close();
  });

  const dispatchesTo = (repository: string) => h.sim.dispatches({ repository });
  const nthDispatch = (repository: string, n: number) =>
    eventually(() => {
      const all = dispatchesTo(repository);
      return all.length >= n ? all[n - 1] : undefined;
    });
  const eventStatus = (runId: number, runAttempt = 1) =>
    h.zekt.store.db
      .selectFrom('events')
      .select(['route_status', 'deliveries_created'])
      .where('run_id', '=', runId)
      .where('run_attempt', '=', runAttempt)
      .executeTakeFirst();

  it('delivers the message joined with the completion event to the subscribed consumer', async () => {
    const message = { version: '1.2.3', environment: 'production', nested: { list: [1, 2, 3], none: null } };
    const result = await h.sim.runWorkflow({
      repository: 'acme/api',
      workflow: 'deploy.yml',
      name: 'Deploy',
      message: { zektUrl: h.url, eventType: 'deploy-finished', payload: message },
    });
    expect(result.message?.status).toBe(201);
    expect(result.message?.body).toMatchObject({ success: true, consumersNotified: 1 });
    expect(result.webhooks.map((w) => w.status)).toEqual([202]);

    const dispatch: DispatchRecord = await nthDispatch('globex/app', 1);
    expect(dispatch.eventType).toBe('deploy-finished');
    const zekt = (dispatch.clientPayload as { zekt: Record<string, unknown> }).zekt;
    expect(Object.keys(dispatch.clientPayload ?? {})).toEqual(['zekt']);
    expect(zekt.payload).toEqual(message);
    expect(zekt).toMatchObject({
      version: 1,
      correlationId: String(result.run.id),
      durable: false,
      isReplay: false,
      retry: 0,
      event: {
        repository: 'acme/api',
        workflow: 'Deploy',
        workflowPath: '.github/workflows/deploy.yml',
        runId: String(result.run.id),
        runAttempt: 1,
        runNumber: result.run.run_number,
        conclusion: 'success',
        headBranch: result.run.head_branch,
        headSha: result.run.head_sha,
        actor: result.run.actor.login,
        htmlUrl: result.run.html_url,
        completedAt: result.run.updated_at,
      },
    });
    expect(zekt.deliveryId).toMatch(/^delivery-[0-9a-f-]{36}$/);
    expect('token' in zekt).toBe(false);
    expect('payloadRef' in zekt).toBe(false);

    // GitHub saw an installation token being minted for the consumer before the dispatch.
    const calls = h.sim.journal().map((entry) => `${entry.method} ${entry.path}`);
    const tokenCall = calls.findIndex((c) =>
      /POST \/api\/v3\/app\/installations\/\d+\/access_tokens/.test(c),
    );
    const dispatchCall = calls.indexOf('POST /api/v3/repos/globex/app/dispatches');
    expect(tokenCall).toBeGreaterThanOrEqual(0);
    expect(dispatchCall).toBeGreaterThan(tokenCall);

    const delivery = await eventually(async () => {
      const row = await h.zekt.store.db.selectFrom('deliveries').selectAll().executeTakeFirst();
      return row?.dispatch_state === 'accepted' ? row : undefined;
    });
    expect(JSON.parse(delivery.platform_response ?? '{}')).toMatchObject({ status: 204 });
  });

  it("routes an event-only run with the service's event type and no payload", async () => {
    const result = await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    const dispatch = await nthDispatch('globex/app', 1);
    expect(dispatch.eventType).toBe('acme-deployed');
    const zekt = (dispatch.clientPayload as { zekt: Record<string, unknown> }).zekt;
    expect('payload' in zekt).toBe(false);
    expect(zekt.correlationId).toBe(String(result.run.id));
  });

  it('blocks a workflow that is not whitelisted: recorded, charged, not dispatched', async () => {
    await h.call('PUT', '/api/v1/repositories/acme/api/workflows/deploy.yml', {
      token: world.providerToken,
      body: { whitelisted: false },
    });
    const result = await h.sim.runWorkflow({
      repository: 'acme/api',
      workflow: 'deploy.yml',
      message: { zektUrl: h.url, eventType: 'deploy-finished', payload: { v: 1 } },
    });
    expect(result.message?.body).toMatchObject({ consumersNotified: 0 });
    await eventually(async () =>
      (await eventStatus(result.run.id))?.route_status === 'blocked' ? true : undefined,
    );
    expect(dispatchesTo('globex/app')).toEqual([]);
    expect(await h.zekt.store.db.selectFrom('deliveries').selectAll().execute()).toEqual([]);

    const usage = await h.call('GET', '/api/v1/usage?account=acme', { token: world.providerToken });
    expect(usage.body.usage[0].counters).toMatchObject({
      eventsReceived: 1,
      eventsBlocked: 1,
      messagesReceived: 1,
    });
    const blocked = await h.call('GET', '/api/v1/blocked?account=acme', { token: world.providerToken });
    expect(blocked.body).toMatchObject({
      blockedEvents: 1,
      topWorkflows: [{ repository: 'acme/api', workflow: 'deploy.yml', blocked: 1 }],
    });
    const workflows = await h.call('GET', '/api/v1/repositories/acme/api/workflows', {
      token: world.providerToken,
    });
    expect(workflows.body.workflows).toEqual([
      expect.objectContaining({ file: 'deploy.yml', whitelisted: false, blockedCount: 1 }),
    ]);
  });

  it('acknowledges a redelivered webhook without routing it twice; a re-run is routed again', async () => {
    const result = await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    await nthDispatch('globex/app', 1);
    const redelivered = await h.sim.redeliver(result.webhooks[0]!.guid);
    expect(redelivered.status).toBe(200);
    expect(JSON.parse(redelivered.responseBody ?? '{}')).toMatchObject({ outcome: 'duplicate' });

    const rerun = await h.sim.rerunWorkflow('acme/api', result.run.id);
    expect(rerun.run.run_attempt).toBe(2);
    const second = await nthDispatch('globex/app', 2);
    const zekt = (second.clientPayload as { zekt: { correlationId: string; event: { runAttempt: number } } })
      .zekt;
    expect(zekt.correlationId).toBe(String(result.run.id));
    expect(zekt.event.runAttempt).toBe(2);
    expect(dispatchesTo('globex/app')).toHaveLength(2);
    // GitHub records the dispatch before Zekt has read its answer and counted the call.
    const calls = await eventually(async () => {
      const usage = await h.call('GET', '/api/v1/usage?account=globex', { token: world.consumerToken });
      const n = usage.body.usage[0].counters.dispatchApiCalls as number;
      return n >= 2 ? n : undefined;
    });
    expect(calls).toBe(2);
  });

  it('sends a payload reference when the message does not fit in a dispatch', async () => {
    const big = { blob: 'x'.repeat(100_000) };
    await h.sim.runWorkflow({
      repository: 'acme/api',
      workflow: 'deploy.yml',
      message: { zektUrl: h.url, eventType: 'big', payload: big },
    });
    const dispatch = await nthDispatch('globex/app', 1);
    const zekt = (dispatch.clientPayload as { zekt: Record<string, unknown> }).zekt;
    expect('payload' in zekt).toBe(false);
    expect(zekt.payloadRef).toEqual({
      url: `${h.url}/api/deliveries/${zekt.deliveryId}/payload`,
      bytes: Buffer.byteLength(JSON.stringify(big)),
    });
  });

  it('delivers no one when the subscription is revoked', async () => {
    await h.call('POST', `/api/v1/subscriptions/${world.subscriptionId}/revoke`, {
      token: world.consumerToken,
    });
    const result = await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    await eventually(async () =>
      (await eventStatus(result.run.id))?.route_status === 'routed' ? true : undefined,
    );
    expect((await eventStatus(result.run.id))?.deliveries_created).toBe(0);
    expect(dispatchesTo('globex/app')).toEqual([]);
  });
});

describe('grace period for late messages', () => {
  it('holds a completed run until its message arrives, then routes it at once', async () => {
    const h = await startHarness({ transport: 'inject', messageGraceMs: 60_000 });
    try {
      await setUpWorld(h);
      const result = await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
      const stored = await h.zekt.store.db
        .selectFrom('events')
        .select('route_status')
        .where('run_id', '=', result.run.id)
        .executeTakeFirstOrThrow();
      expect(stored.route_status).toBe('pending');
      expect(h.sim.dispatches()).toEqual([]);
      const token = await h.sim.mintOidcToken({
        repository: 'acme/api',
        workflow: 'deploy.yml',
        runId: result.run.id,
      });
      const late = await h.call('POST', '/api/events/receive', {
        headers: { authorization: `Bearer ${token}` },
        body: { eventType: 'late-news', payload: { late: true } },
      });
      expect(late.status).toBe(201);
      const dispatch = await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[0]);
      expect(dispatch.eventType).toBe('late-news');
      expect((dispatch.clientPayload as { zekt: { payload: unknown } }).zekt.payload).toEqual({ late: true });
    } finally {
      await h.close();
    }
  });
});
