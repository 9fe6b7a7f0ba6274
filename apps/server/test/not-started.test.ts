import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../src/domain/clock.js';
import { makeDurable, setUpWorld, type World } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';

/**
 * Never-started deliveries on the real service and simulator: globex/app has
 * no workflow listening, so GitHub (the simulator) answers 204 and nothing runs. Zekt's clock is a
 * manual one and the flagging pass is driven by hand, so "10 minutes later" is a clock move.
 */
const AFTER_MS = 10 * 60_000;

describe('never-started deliveries', () => {
  let h: Harness;
  let world: World;
  let clock: ManualClock;
  beforeEach(async () => {
    clock = createManualClock(Date.now());
    h = await startHarness({ transport: 'inject', clock, env: { ZEKT_INSTALLATION_DISPATCH_RATE: '0' } });
    world = await setUpWorld(h);
    await makeDurable(h, world);
  });
  afterEach(async () => {
    await h.close();
  });

  async function deliver(): Promise<{ deliveryId: string; correlationId: string; token: string }> {
    const before = h.sim.dispatches({ repository: 'globex/app' }).length;
    await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    const dispatch = await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[before]);
    const zekt = (
      dispatch.clientPayload as { zekt: { deliveryId: string; correlationId: string; token: string } }
    ).zekt;
    await eventually(async () =>
      (await record(zekt.deliveryId)).dispatch.state === 'accepted' ? true : undefined,
    );
    return zekt;
  }
  const record = async (deliveryId: string) =>
    (await h.call('GET', `/api/v1/deliveries/${deliveryId}`, { token: world.consumerToken })).body;
  const diagnostics = async () =>
    (
      await h.call('GET', `/api/connections/${world.subscriptionId}/diagnostics`, {
        token: world.providerToken,
      })
    ).body;
  const connection = async () =>
    (await h.call('GET', '/api/v1/connections', { token: world.consumerToken })).body.connections[0];

  it('flags a delivery no workflow started for after ZEKT_NOT_STARTED_AFTER, in the record, diagnostics and health', async () => {
    const acceptedAt = clock.now();
    const delivery = await deliver();
    expect((await record(delivery.deliveryId)).notStartedAt).toBeNull();

    clock.set(acceptedAt + AFTER_MS - 1);
    expect(await h.zekt.notStarted.flag()).toEqual([]);
    expect((await record(delivery.deliveryId)).notStartedAt).toBeNull();
    expect((await diagnostics()).categories.not_started).toBe(0);

    clock.set(acceptedAt + AFTER_MS);
    const flagged = await h.zekt.notStarted.flag();
    expect(flagged.map((f) => f.deliveryId)).toEqual([delivery.deliveryId]);
    expect(await h.zekt.notStarted.flag()).toEqual([]);
    const flaggedRecord = await record(delivery.deliveryId);
    expect(flaggedRecord).toMatchObject({
      deliveryStatus: 'Dispatched',
      notStartedAt: new Date(acceptedAt + AFTER_MS).toISOString(),
      dispatch: { state: 'accepted' },
      platformResponse: { status: 204 },
    });

    const report = await diagnostics();
    expect(report.categories).toMatchObject({ not_started: 1, service_unavailable: 0, other: 0 });
    expect(report.recentFailures).toEqual([
      expect.objectContaining({
        deliveryId: delivery.deliveryId,
        category: 'not_started',
        status: 204,
        attempt: 1,
        message: expect.stringContaining('within 10 min'),
      }),
    ]);
    expect(report.recommendations).toEqual([
      {
        category: 'not_started',
        text: expect.stringContaining(
          'must exist on the default branch of globex/app with `on: repository_dispatch: types: [acme-deployed]`',
        ),
      },
    ]);
    expect(await connection()).toMatchObject({
      health: 'Critical',
      successRate: 0,
      stats: { last24h: { total: 1, succeeded: 0, notStarted: 1 } },
    });

    const list = await h.call('GET', '/api/v1/deliveries?notStarted=true', { token: world.providerToken });
    expect(list.body.deliveries.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([
      delivery.deliveryId,
    ]);
    const bad = await h.call('GET', '/api/v1/deliveries?notStarted=yes', { token: world.providerToken });
    expect(bad.status).toBe(400);
    expect(bad.contentType).toContain('application/problem+json');

    // Still replayable: the replay is a fresh delivery, waiting for its own start.
    const replay = await h.call('POST', `/api/replay/${delivery.deliveryId}`, { token: world.consumerToken });
    expect(replay.status).toBe(202);
    expect(replay.body).toMatchObject({ replayOf: delivery.deliveryId, notStartedAt: null });
    await eventually(async () =>
      (await record(replay.body.deliveryId)).dispatch.state === 'accepted' ? true : undefined,
    );

    // A late start moves the record on; the flag stays as what happened, and health recovers.
    const late = await h.call('POST', '/api/event-delivery/confirm', {
      headers: { authorization: `Bearer ${delivery.token}` },
      body: { correlationId: delivery.correlationId, deliveryId: delivery.deliveryId },
    });
    expect(late.status).toBe(200);
    expect(await record(delivery.deliveryId)).toMatchObject({
      deliveryStatus: 'Confirmed',
      notStartedAt: new Date(acceptedAt + AFTER_MS).toISOString(),
    });
    expect((await connection()).stats.last24h.notStarted).toBe(0);
    const after = await h.call('GET', '/api/v1/deliveries?notStarted=true', { token: world.providerToken });
    expect(after.body.deliveries).toEqual([]);
  });

  it('never flags a delivery that was confirmed, or whose run GitHub queued, in time', async () => {
    const start = clock.now();
    const confirmed = await deliver();
    const ok = await h.call('POST', '/api/event-delivery/confirm', {
      headers: { authorization: `Bearer ${confirmed.token}` },
      body: { correlationId: confirmed.correlationId },
    });
    expect(ok.status).toBe(200);

    // A workflow that exists but waits for a runner: completion tracking sees it requested.
    h.sim.defineConsumerWorkflow({
      repository: 'globex/app',
      workflow: 'on-deploy.yml',
      types: ['acme-deployed'],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a JS template.
      runName: 'zekt ${{ github.event.client_payload.zekt.deliveryId }}',
      startDelayMs: 600_000,
    });
    const queued = await deliver();
    await eventually(() =>
      h.sim
        .consumerRuns({ repository: 'globex/app' })
        .find((run) => run.deliveryId === queued.deliveryId && run.webhooks.length > 0),
    );
    // The `requested` webhook has been answered; what it changed is visible to the next pass.
    clock.set(start + 2 * AFTER_MS);
    expect(await h.zekt.notStarted.flag()).toEqual([]);
    expect(await record(confirmed.deliveryId)).toMatchObject({
      deliveryStatus: 'Confirmed',
      notStartedAt: null,
    });
    expect(await record(queued.deliveryId)).toMatchObject({
      deliveryStatus: 'Dispatched',
      notStartedAt: null,
    });
    expect((await diagnostics()).categories.not_started).toBe(0);
  });
});
