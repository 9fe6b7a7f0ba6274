import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../src/domain/clock.js';
import { MAX_REDELIVERY_ASKS } from '../src/domain/reconcile.js';
import { placedHookId, setUpWorld, type World } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';

/**
 * Missed webhooks: the simulator drops a webhook as an unreachable Zekt would lose
 * it; the reconciler finds it in the hook's deliveries, asks GitHub for it again, and ingestion's
 * idempotency routes it once however often it comes.
 */
describe('the reconciler', () => {
  let h: Harness;
  let world: World;
  let clock: ManualClock;
  beforeEach(async () => {
    clock = createManualClock(Date.now());
    h = await startHarness({ transport: 'inject', clock, env: { ZEKT_RECONCILE_INTERVAL_MS: '0' } });
    world = await setUpWorld(h);
  });
  afterEach(async () => {
    await h.close();
  });

  const providerHookId = () => placedHookId(h, 'acme/api', 'provider');

  it('recovers a workflow_run the simulator dropped, and routes it once', async () => {
    h.sim.dropWebhooks({ event: 'workflow_run', repository: 'acme/api' });
    const run = await h.sim.runWorkflow({
      repository: 'acme/api',
      workflow: 'deploy.yml',
      message: { zektUrl: h.url, eventType: 'acme-deployed', payload: { version: '1.0.0' } },
    });
    const [dropped] = run.webhooks;
    expect(dropped).toMatchObject({ status: null, error: 'failed to connect' });
    expect(h.sim.dispatches({ repository: 'globex/app' })).toHaveLength(0);

    const hookId = await providerHookId();
    const report = await h.zekt.reconciler.reconcile({ waitForRecoveryMs: 10_000 });
    expect(report.ran).toBe(true);
    expect(report.requested).toEqual([
      {
        guid: dropped?.guid,
        hook: `repository:${hookId}`,
        githubDeliveryId: dropped?.id,
        event: 'workflow_run',
        action: 'completed',
        ask: 1,
      },
    ]);
    expect(report.recovered.map((r) => r.guid)).toEqual([dropped?.guid]);
    expect(report.webhooks.map((w) => [w.webhook, w.outcome, w.failed, w.requested])).toEqual([
      ['the App webhook', 'checked', 0, 0],
      [`acme/api provider webhook ${hookId}`, 'checked', 1, 1],
    ]);

    const dispatch = await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[0]);
    const zekt = (dispatch.clientPayload as { zekt: { correlationId: string; payload: unknown } }).zekt;
    expect(zekt.correlationId).toBe(String(run.run.id));
    expect(zekt.payload).toEqual({ version: '1.0.0' });

    // A second pass finds nothing to do: the webhook's redelivery succeeded.
    const again = await h.zekt.reconciler.reconcile();
    expect(again.requested).toEqual([]);
    expect(again.webhooks.every((w) => w.outcome === 'checked' && w.failed === 0)).toBe(true);

    // The same GUID once more (someone presses Redeliver on GitHub): a duplicate, not a second event.
    const redelivered = await h.sim.redeliver(dropped?.guid ?? '');
    expect(redelivered.status).toBe(200);
    const events = await h.zekt.store.db
      .selectFrom('events')
      .select('event_id')
      .where('run_id', '=', run.run.id)
      .execute();
    expect(events).toHaveLength(1);
    const deliveries = await h.zekt.store.db
      .selectFrom('deliveries')
      .select('delivery_id')
      .where('subscription_id', '=', world.subscriptionId)
      .execute();
    expect(deliveries).toHaveLength(1);
  });

  it('recovers an installation event missed on the App webhook', async () => {
    h.sim.dropWebhooks({ hookType: 'app', event: 'installation' });
    const { installation, delivery } = await h.sim.createInstallation({
      account: { login: 'initech', type: 'Organization' },
      repositories: ['tps'],
    });
    expect(delivery).toMatchObject({ status: null, error: 'failed to connect' });
    const account = () =>
      h.zekt.store.db
        .selectFrom('accounts')
        .select(['installation_id'])
        .where('login', '=', 'initech')
        .executeTakeFirst();
    expect(await account()).toBeUndefined();

    const report = await h.zekt.reconciler.reconcile({ waitForRecoveryMs: 10_000 });
    expect(report.requested).toMatchObject([{ guid: delivery?.guid, hook: 'app', event: 'installation' }]);
    expect(report.recovered.map((r) => r.guid)).toEqual([delivery?.guid]);
    expect(Number((await account())?.installation_id)).toBe(installation.id);
  });

  it('reports 401, 404 and rate limits, backs off, and carries on once they pass', async () => {
    h.sim.dropWebhooks({ event: 'workflow_run', repository: 'acme/api' });
    const run = await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    const guid = run.webhooks[0]?.guid;
    const hookId = await providerHookId();
    h.sim.injectFaults({
      method: 'GET',
      path: '/app/hook/deliveries',
      faults: [{ kind: 'status', status: 401 }],
    });
    h.sim.injectFaults({
      method: 'GET',
      path: `/repos/acme/api/hooks/${hookId}/deliveries`,
      faults: [{ kind: 'status', status: 404 }],
    });

    const first = await h.zekt.reconciler.reconcile();
    const start = clock.now();
    expect(first.requested).toEqual([]);
    expect(first.webhooks).toMatchObject([
      {
        webhook: 'the App webhook',
        outcome: 'refused',
        problem: { kind: 'unauthorized', retryAt: new Date(start + 5 * 60_000).toISOString() },
      },
      {
        webhook: `acme/api provider webhook ${hookId}`,
        outcome: 'refused',
        problem: { kind: 'not_found', retryAt: new Date(start + 5 * 60_000).toISOString() },
      },
    ]);
    expect(first.webhooks[1]?.problem?.message).toContain('Not Found');

    // Within the back-off nothing is asked of GitHub.
    h.sim.clearJournal();
    const during = await h.zekt.reconciler.reconcile();
    expect(during.webhooks.map((w) => w.outcome)).toEqual(['backing_off', 'backing_off']);
    expect(h.sim.journal().filter((entry) => entry.path.includes('/deliveries'))).toEqual([]);

    // Past it, the listing works but the redelivery is rate limited: reported, not remembered.
    clock.advance(5 * 60_000);
    h.sim.injectFaults({
      method: 'POST',
      path: `/repos/acme/api/hooks/${hookId}/deliveries/*/attempts`,
      faults: [{ kind: 'retry_after', status: 429, retryAfterSeconds: 120 }],
    });
    const limited = await h.zekt.reconciler.reconcile();
    expect(limited.requested).toEqual([]);
    expect(limited.webhooks[0]?.outcome).toBe('checked');
    expect(limited.webhooks[1]).toMatchObject({
      outcome: 'refused',
      failed: 1,
      problem: { kind: 'rate_limited', retryAt: new Date(clock.now() + 120_000).toISOString() },
    });

    clock.advance(120_000);
    const recovered = await h.zekt.reconciler.reconcile({ waitForRecoveryMs: 10_000 });
    expect(recovered.requested.map((r) => r.guid)).toEqual([guid]);
    expect(recovered.recovered.map((r) => r.guid)).toEqual([guid]);
  });

  /** Waits until GitHub (the simulator) has made `n` redeliveries of `guid`. */
  const redeliveriesMade = (guid: string, n: number) =>
    eventually(() => {
      const made = h.sim.webhookDeliveries().filter((d) => d.guid === guid && d.redelivery);
      return made.length >= n ? made : undefined;
    });
  const MINUTE = 60_000;

  it('asks again, backing off, for a redelivery that failed again, and routes the run once it arrives', async () => {
    // The original and the first two redeliveries are answered 429 (a lock-out, say).
    h.sim.dropWebhooks({ event: 'workflow_run', repository: 'acme/api', count: 3, status: 429 });
    const run = await h.sim.runWorkflow({
      repository: 'acme/api',
      workflow: 'deploy.yml',
      message: { zektUrl: h.url, eventType: 'acme-deployed', payload: { version: '3.0.0' } },
    });
    const guid = run.webhooks[0]?.guid ?? '';

    const first = await h.zekt.reconciler.reconcile();
    expect(first.requested.map((r) => r.guid)).toEqual([guid]);
    await redeliveriesMade(guid, 1);
    // The redelivery failed too; the next ask waits 15 minutes.
    expect((await h.zekt.reconciler.reconcile()).requested).toEqual([]);
    clock.advance(14 * MINUTE);
    expect((await h.zekt.reconciler.reconcile()).requested).toEqual([]);
    clock.advance(MINUTE);
    const second = await h.zekt.reconciler.reconcile();
    expect(second.requested.map((r) => r.guid)).toEqual([guid]);
    expect(second.webhooks[1]).toMatchObject({ failed: 1, requested: 1, gaveUp: 0 });
    await redeliveriesMade(guid, 2);
    // Then 30 minutes.
    clock.advance(29 * MINUTE);
    expect((await h.zekt.reconciler.reconcile()).requested).toEqual([]);
    clock.advance(MINUTE);
    const third = await h.zekt.reconciler.reconcile({ waitForRecoveryMs: 10_000 });
    expect(third.requested.map((r) => r.guid)).toEqual([guid]);
    expect(third.recovered.map((r) => r.guid)).toEqual([guid]);
    expect([first, second, third].map((report) => report.requested[0]?.ask)).toEqual([1, 2, 3]);

    const dispatch = await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[0]);
    const zekt = (dispatch.clientPayload as { zekt: { correlationId: string } }).zekt;
    expect(zekt.correlationId).toBe(String(run.run.id));
    clock.advance(6 * 60 * MINUTE);
    expect((await h.zekt.reconciler.reconcile()).requested).toEqual([]);
    expect(h.sim.dispatches({ repository: 'globex/app' })).toHaveLength(1);
  });

  it(`gives up after ${MAX_REDELIVERY_ASKS} asks whose redeliveries all failed, and says so once`, async () => {
    h.sim.dropWebhooks({ event: 'workflow_run', repository: 'acme/api', count: 1000 });
    const run = await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    const guid = run.webhooks[0]?.guid ?? '';
    const reports = [];
    for (let ask = 1; ask <= MAX_REDELIVERY_ASKS; ask++) {
      const report = await h.zekt.reconciler.reconcile();
      expect(report.requested.map((r) => r.guid)).toEqual([guid]);
      reports.push(report);
      await redeliveriesMade(guid, ask);
      // 15 minutes after the first ask, doubling: always past the back-off.
      clock.advance(15 * MINUTE * 2 ** (ask - 1));
    }
    expect(reports.map((report) => [report.requested[0]?.ask, report.gaveUp.length])).toEqual([
      [1, 0],
      [2, 0],
      [3, 0],
      [4, 0],
      [5, 0],
    ]);

    const given = await h.zekt.reconciler.reconcile();
    expect(given.requested).toEqual([]);
    expect(given.gaveUp.map((r) => r.guid)).toEqual([guid]);
    expect(given.webhooks[1]).toMatchObject({ failed: 1, requested: 0, gaveUp: 1 });
    clock.advance(6 * 60 * MINUTE);
    const later = await h.zekt.reconciler.reconcile();
    expect(later.requested).toEqual([]);
    expect(later.gaveUp).toEqual([]);
    expect(h.sim.webhookDeliveries().filter((d) => d.guid === guid && d.redelivery)).toHaveLength(
      MAX_REDELIVERY_ASKS,
    );

    // Once the cause is fixed, someone presses Redeliver on GitHub: the next pass says it arrived.
    h.sim.clearWebhookDrops();
    expect((await h.sim.redeliver(guid)).status).toBe(202);
    expect((await h.zekt.reconciler.reconcile()).recovered.map((r) => r.guid)).toEqual([guid]);
  });
});
