import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../src/domain/clock.js';
import { setUpWorld, type World } from './support/demo-world.js';
import { completedWorkflowRunExample } from './support/github-examples.js';
import { eventually, type Harness, startHarness } from './support/harness.js';

/**
 * Durable delivery on the real service and simulator: tracked records, the consumer API,
 * completion tracking, replay, delivery status, connections. Zekt's clock is a manual one, so
 * expiry is reached by moving it, never by waiting.
 */
interface Zekt {
  version: number;
  correlationId: string;
  deliveryId: string;
  durable: boolean;
  isReplay: boolean;
  retry: number;
  token?: string;
  event: Record<string, unknown>;
  payload?: unknown;
  payloadRef?: { url: string; bytes: number };
}

describe('durable delivery', () => {
  let h: Harness;
  let world: World;
  let clock: ManualClock;
  let mallory: string;
  beforeEach(async () => {
    clock = createManualClock(Date.now());
    // The manual clock never reaches a paced slot by itself: pacing has its own test.
    h = await startHarness({ transport: 'inject', clock, env: { ZEKT_INSTALLATION_DISPATCH_RATE: '0' } });
    world = await setUpWorld(h);
    const tracking = await h.call('PUT', '/api/v1/repositories/globex/app/completion-tracking', {
      token: world.consumerToken,
      body: { enabled: true },
    });
    expect(tracking.body.completionTracking).toEqual({ enabled: true });
    const durable = await h.call('PATCH', `/api/v1/subscriptions/${world.subscriptionId}`, {
      token: world.consumerToken,
      body: { durable: true },
    });
    expect(durable.body.durable).toBe(true);
    await h.sim.createInstallation({
      account: { login: 'initech' },
      repositories: ['tps'],
      sender: { login: 'mallory' },
    });
    mallory = await h.tokenFor('mallory');
  });
  afterEach(async () => {
    await h.close();
  });

  /** Runs the provider workflow and returns the n-th dispatch to globex/app. */
  async function deliver(
    message?: unknown,
    n = h.sim.dispatches({ repository: 'globex/app' }).length + 1,
  ): Promise<Zekt> {
    await h.sim.runWorkflow({
      repository: 'acme/api',
      workflow: 'deploy.yml',
      ...(message === undefined
        ? {}
        : { message: { zektUrl: h.url, eventType: 'deployed', payload: message } }),
    });
    return nthDispatch(n);
  }
  async function nthDispatch(n: number): Promise<Zekt> {
    const dispatch = await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[n - 1]);
    return (dispatch.clientPayload as { zekt: Zekt }).zekt;
  }
  const record = (deliveryId: string, token = world.providerToken) =>
    h.call('GET', `/api/v1/deliveries/${deliveryId}`, { token });
  const consumerToken = (repository = 'globex/app') =>
    h.sim.mintOidcToken({
      repository,
      workflow: 'on-deploy.yml',
      runId: 4_000_000_000 + Math.floor(Math.random() * 1e6),
    });
  const report = (kind: 'confirm' | 'complete', bearer: string | undefined, body: unknown) =>
    h.call('POST', `/api/event-delivery/${kind}`, {
      headers: bearer ? { authorization: `Bearer ${bearer}` } : {},
      body,
    });
  const accepted = (deliveryId: string) =>
    eventually(async () => {
      const r = await record(deliveryId);
      return r.body.dispatch?.state === 'accepted' ? r.body : undefined;
    });

  it('tracks a delivery Dispatched → Confirmed → Completed through the consumer API', async () => {
    const zekt = await deliver({ version: '1.2.3' });
    expect(zekt.durable).toBe(true);
    expect(zekt.token).toMatch(/^zdt_/);
    const dispatched = await accepted(zekt.deliveryId);
    expect(dispatched).toMatchObject({
      deliveryId: zekt.deliveryId,
      correlationId: zekt.correlationId,
      deliveryStatus: 'Dispatched',
      durable: true,
      isFinalized: false,
      confirmationAttempts: 0,
      retryNumber: 0,
      confirmedAt: null,
      completedAt: null,
      consumerWorkflowConclusion: null,
      provider: {
        account: 'acme',
        repository: 'acme/api',
        workflow: '.github/workflows/deploy.yml',
        runId: zekt.correlationId,
        runAttempt: 1,
      },
      consumer: { account: 'globex', repository: 'globex/app' },
      eventType: 'deployed',
      platformResponse: {
        status: 204,
        headers: expect.objectContaining({ 'x-github-request-id': expect.any(String) }),
      },
      attempts: [expect.objectContaining({ number: 1, outcome: 'accepted', status: 204, category: null })],
    });
    const dispatchedAt = Date.parse(dispatched.dispatchedAt);

    const oidc = await consumerToken();
    clock.advance(1_000);
    const confirmed = await report('confirm', oidc, { correlationId: zekt.correlationId });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({
      deliveryStatus: 'Confirmed',
      confirmationAttempts: 1,
      isFinalized: false,
    });
    expect(Date.parse(confirmed.body.confirmedAt)).toBe(dispatchedAt + 1_000);
    clock.advance(1_000);
    const again = await report('confirm', oidc, { correlationId: Number(zekt.correlationId) });
    expect(again.body).toMatchObject({
      deliveryStatus: 'Confirmed',
      confirmationAttempts: 2,
      confirmedAt: confirmed.body.confirmedAt,
    });
    clock.advance(5_000);
    const completed = await report('complete', oidc, { correlationId: zekt.correlationId, success: true });
    expect(completed.status).toBe(200);
    expect(completed.body).toMatchObject({
      deliveryStatus: 'Completed',
      consumerWorkflowConclusion: 'success',
      isFinalized: true,
      confirmedAt: confirmed.body.confirmedAt,
    });
    expect(Date.parse(completed.body.completedAt)).toBe(dispatchedAt + 7_000);

    for (const [kind, body] of [
      ['complete', { correlationId: zekt.correlationId, success: false }],
      ['confirm', { correlationId: zekt.correlationId }],
    ] as const) {
      const final = await report(kind, oidc, body);
      expect(final.status).toBe(409);
      expect(final.body).toMatchObject({
        code: 'already_final',
        record: { deliveryStatus: 'Completed', completedAt: completed.body.completedAt },
      });
    }
    const usage = await h.call('GET', '/api/v1/usage?account=globex', { token: world.consumerToken });
    expect(usage.body.usage[0].counters).toMatchObject({
      confirmCalls: 3,
      completeCalls: 2,
      dispatchApiCalls: 1,
    });
  });

  it("accepts the delivery's own token, completes without a confirm, and records a failure", async () => {
    const zekt = await deliver();
    await accepted(zekt.deliveryId);
    clock.advance(3_000);
    const failed = await report('complete', zekt.token, {
      correlationId: zekt.correlationId,
      success: false,
    });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({
      deliveryStatus: 'Failed',
      consumerWorkflowConclusion: 'failure',
      isFinalized: true,
    });
    expect(failed.body.confirmedAt).toBe(failed.body.completedAt);
  });

  it('refuses bad consumer calls without touching the record', async () => {
    const zekt = await deliver();
    const before = (await accepted(zekt.deliveryId)) as Record<string, unknown>;
    const oidc = await consumerToken();
    const expectProblem = async (
      response: Awaited<ReturnType<typeof report>>,
      status: number,
      code: string,
    ) => {
      expect(response.status).toBe(status);
      expect(response.contentType).toContain('application/problem+json');
      expect(response.body.code).toBe(code);
    };
    await expectProblem(
      await report('confirm', oidc, { correlationId: '999999' }),
      404,
      'delivery_not_found',
    );
    await expectProblem(
      await report('confirm', await consumerToken('acme/api'), { correlationId: zekt.correlationId }),
      404,
      'delivery_not_found',
    );
    await expectProblem(
      await report('confirm', undefined, { correlationId: zekt.correlationId }),
      401,
      'invalid_token',
    );
    await expectProblem(
      await report('confirm', 'not-a-token', { correlationId: zekt.correlationId }),
      401,
      'invalid_token',
    );
    await expectProblem(
      await report('confirm', 'zdt_short', { correlationId: zekt.correlationId }),
      401,
      'invalid_token',
    );
    await expectProblem(
      await report('complete', oidc, { correlationId: zekt.correlationId }),
      400,
      'invalid_request',
    );
    await expectProblem(
      await report('complete', oidc, { correlationId: zekt.correlationId, success: 'yes' }),
      400,
      'invalid_request',
    );
    await expectProblem(await report('confirm', oidc, {}), 400, 'invalid_request');
    // Another delivery's token (a later run) does not open this one.
    const other = await deliver();
    await expectProblem(
      await report('confirm', other.token, { correlationId: zekt.correlationId }),
      404,
      'delivery_not_found',
    );
    const after = await record(zekt.deliveryId);
    const { attempts: _a, ...beforeFields } = before;
    const { attempts: _b, ...afterFields } = after.body;
    expect(afterFields).toEqual(beforeFields);
  });

  it('confirms and completes from the consumer repository’s workflow_run webhooks, one transition per change', async () => {
    const zekt = await deliver();
    await accepted(zekt.deliveryId);
    const example = completedWorkflowRunExample();
    const consumerRun = (action: string, extra: Record<string, unknown>) => ({
      ...example,
      action,
      workflow_run: {
        ...(example.workflow_run as object),
        id: 777,
        event: 'repository_dispatch',
        display_title: `zekt ${zekt.deliveryId}`,
        ...extra,
      },
    });
    const send = async (payload: unknown) => {
      const deliveries = await h.sim.sendRepositoryWebhook('globex/app', 'workflow_run', payload);
      expect(deliveries).toHaveLength(1);
      return { status: deliveries[0]!.status, body: JSON.parse(deliveries[0]!.responseBody ?? '{}') };
    };
    clock.advance(1_000);
    expect(await send(consumerRun('requested', { status: 'queued', conclusion: null }))).toMatchObject({
      status: 202,
    });
    expect((await record(zekt.deliveryId)).body.deliveryStatus).toBe('Dispatched');
    expect(await send(consumerRun('in_progress', { status: 'in_progress', conclusion: null }))).toMatchObject(
      {
        status: 200,
        body: { outcome: 'applied' },
      },
    );
    expect((await record(zekt.deliveryId)).body).toMatchObject({
      deliveryStatus: 'Confirmed',
      confirmationAttempts: 1,
    });
    clock.advance(1_000);
    expect(
      await send(consumerRun('completed', { status: 'completed', conclusion: 'success' })),
    ).toMatchObject({ status: 200 });
    const completed = (await record(zekt.deliveryId)).body;
    expect(completed).toMatchObject({
      deliveryStatus: 'Completed',
      consumerWorkflowConclusion: 'success',
      isFinalized: true,
    });
    // The workflow's own complete step arrives after the webhook: the same record, no second transition.
    clock.advance(1_000);
    const late = await report('complete', zekt.token, { correlationId: zekt.correlationId, success: false });
    expect(late.status).toBe(409);
    expect(late.body.record).toMatchObject({
      deliveryStatus: 'Completed',
      completedAt: completed.completedAt,
    });
    // Runs that are not Zekt deliveries are left alone.
    expect(await send(consumerRun('completed', { event: 'push', conclusion: 'failure' }))).toMatchObject({
      status: 202,
    });
    expect(
      await send(consumerRun('completed', { display_title: 'nightly build', conclusion: 'failure' })),
    ).toMatchObject({
      status: 202,
    });
  });

  it('replays the archived payload unchanged as a new delivery, and refuses once the archive expired', async () => {
    const message = { version: '9.9.9', notes: ['a', 'b'] };
    const original = await deliver(message);
    await accepted(original.deliveryId);
    const replay = await h.call('POST', `/api/replay/${original.deliveryId}`, { token: world.consumerToken });
    expect(replay.status).toBe(202);
    expect(replay.body).toMatchObject({
      replayOf: original.deliveryId,
      retryNumber: 0,
      isReplay: true,
      deliveryStatus: 'Dispatched',
      correlationId: original.correlationId,
    });
    const resent = await nthDispatch(2);
    expect(resent.deliveryId).toBe(replay.body.deliveryId);
    expect(resent).toMatchObject({
      isReplay: true,
      retry: 0,
      durable: true,
      correlationId: original.correlationId,
    });
    expect(resent.payload).toEqual(message);
    expect(resent.event).toEqual(original.event);
    expect(resent.token).not.toBe(original.token);
    expect((await record(original.deliveryId)).body.replayedBy).toBe(replay.body.deliveryId);
    expect((await record(original.deliveryId)).body.deliveryStatus).toBe('Dispatched');

    expect(
      (
        await h.call('POST', '/api/replay/delivery-00000000-0000-7000-8000-000000000000', {
          token: world.providerToken,
        })
      ).status,
    ).toBe(404);
    expect((await h.call('POST', `/api/replay/${original.deliveryId}`, { token: mallory })).status).toBe(404);
    clock.advance(90 * 24 * 3_600_000 + 1);
    const expired = await h.call('POST', `/api/replay/${original.deliveryId}`, {
      token: world.providerToken,
    });
    expect([expired.status, expired.body.code]).toEqual([410, 'archive_expired']);
  });

  it('serves a payload sent by reference to its consumer only', async () => {
    const big = { blob: 'z'.repeat(80_000) };
    const zekt = await deliver(big);
    expect(zekt.payloadRef).toEqual({
      url: `${h.url}/api/deliveries/${zekt.deliveryId}/payload`,
      bytes: Buffer.byteLength(JSON.stringify(big)),
    });
    const path = `/api/deliveries/${zekt.deliveryId}/payload`;
    const withToken = await h.call('GET', path, { headers: { authorization: `Bearer ${zekt.token}` } });
    expect([withToken.status, withToken.contentType.split(';')[0]]).toEqual([200, 'application/json']);
    expect(withToken.body).toEqual(big);
    expect(
      (await h.call('GET', path, { headers: { authorization: `Bearer ${await consumerToken()}` } })).body,
    ).toEqual(big);
    expect(
      (await h.call('GET', path, { headers: { authorization: `Bearer ${await consumerToken('acme/api')}` } }))
        .status,
    ).toBe(404);
    expect((await h.call('GET', path)).status).toBe(401);
    clock.advance(90 * 24 * 3_600_000 + 1);
    const gone = await h.call('GET', path, { headers: { authorization: `Bearer ${zekt.token}` } });
    expect([gone.status, gone.body.code]).toEqual([410, 'archive_expired']);
  });

  it('lists delivery status with filters and cursor pagination, to both sides only', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await deliver()).deliveryId);
      clock.advance(1_000);
    }
    for (const id of ids) await accepted(id);
    await report('complete', (await nthDispatch(1)).token, {
      correlationId: (await nthDispatch(1)).correlationId,
      success: true,
    });
    const page1 = await h.call('GET', '/api/v1/deliveries?limit=2', { token: world.providerToken });
    expect(page1.body.deliveries.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([ids[2], ids[1]]);
    const page2 = await h.call('GET', `/api/v1/deliveries?limit=2&cursor=${page1.body.nextCursor}`, {
      token: world.providerToken,
    });
    expect(page2.body.deliveries.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([ids[0]]);
    expect(page2.body.nextCursor).toBeNull();
    const completed = await h.call('GET', '/api/v1/deliveries?status=Completed', {
      token: world.consumerToken,
    });
    expect(completed.body.deliveries.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([ids[0]]);
    const byConnection = await h.call('GET', `/api/v1/deliveries?connection=${world.subscriptionId}`, {
      token: world.consumerToken,
    });
    expect(byConnection.body.deliveries).toHaveLength(3);
    const future = new Date(clock.now() + 60_000).toISOString();
    expect(
      (await h.call('GET', `/api/v1/deliveries?since=${future}`, { token: world.consumerToken })).body
        .deliveries,
    ).toEqual([]);
    expect((await h.call('GET', '/api/v1/deliveries', { token: mallory })).body.deliveries).toEqual([]);
    expect((await h.call('GET', `/api/v1/deliveries/${ids[0]}`, { token: mallory })).status).toBe(404);
    for (const bad of ['status=Done', 'limit=0', 'limit=101', 'since=yesterday', 'cursor=abc']) {
      const response = await h.call('GET', `/api/v1/deliveries?${bad}`, { token: world.providerToken });
      expect(response.status, bad).toBe(400);
    }
  });

  it('shows connection health and quick statistics, and diagnostics of a clean connection', async () => {
    const empty = await h.call('GET', '/api/v1/connections', { token: world.consumerToken });
    expect(empty.body.connections).toEqual([
      expect.objectContaining({
        id: world.subscriptionId,
        health: 'Healthy',
        successRate: null,
        lastEventAt: null,
        durable: true,
      }),
    ]);
    const zekt = await deliver();
    await accepted(zekt.deliveryId);
    // Dispatched but not yet confirmed: 0 % success in the window.
    expect(
      (await h.call('GET', '/api/v1/connections', { token: world.providerToken })).body.connections[0],
    ).toMatchObject({
      health: 'Critical',
      successRate: 0,
      stats: { last24h: { total: 1, succeeded: 0, failed: 0 }, last7d: { total: 1 }, pending: 0 },
    });
    await report('confirm', zekt.token, { correlationId: zekt.correlationId });
    const healthy = (await h.call('GET', '/api/v1/connections', { token: world.providerToken })).body
      .connections[0];
    expect(healthy).toMatchObject({ health: 'Healthy', successRate: 100 });
    clock.advance(8 * 24 * 3_600_000);
    expect(
      (await h.call('GET', '/api/v1/connections', { token: world.providerToken })).body.connections[0],
    ).toMatchObject({
      health: 'Warning',
      successRate: null,
    });
    const diagnostics = await h.call('GET', `/api/connections/${world.subscriptionId}/diagnostics`, {
      token: world.consumerToken,
    });
    expect(diagnostics.body).toMatchObject({
      connectionId: world.subscriptionId,
      health: 'Warning',
      categories: {
        service_unavailable: 0,
        timeout: 0,
        auth: 0,
        rate_limited: 0,
        network: 0,
        not_found: 0,
        rejected: 0,
        other: 0,
      },
      recentFailures: [],
      recommendations: [],
      window: { days: 30 },
    });
    expect(
      (await h.call('GET', `/api/connections/${world.subscriptionId}/diagnostics`, { token: mallory }))
        .status,
    ).toBe(404);
  });
});
