import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withHandoff } from '../src/delivery/handoff.js';
import { setUpWorld } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';
import { parsePrometheusText, sampleValue } from './support/prometheus-text.js';

/**
 * Lease at creation (delivery/handoff.ts): a delivery created while the dispatcher has
 * room is leased to it in the transaction that stores the webhook and goes out without a claim;
 * one created while its installation is at its cap waits in the table and is claimed when the
 * slot frees. Asserted on what was committed, the dispatcher's own counts and GitHub's order,
 * never on timings.
 */
describe('deliveries handed to the dispatcher at creation', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      transport: 'inject',
      env: {
        ZEKT_INSTALLATION_DISPATCH_RATE: '0',
        // One call in flight to globex at a time: the second and third runs find its slot taken.
        ZEKT_INSTALLATION_CONCURRENCY: '1',
        // No poll finds them: the slot's release must wake the claim (the claim that found them
        // waiting for the slot says so).
        ZEKT_POLL_INTERVAL_MS: '60000',
      },
    });
  });
  afterAll(async () => {
    await h.close();
  });

  const starts = async () => {
    const exposition = parsePrometheusText((await h.zekt.metrics.scrape()).body);
    return {
      handoff: sampleValue(exposition, 'zekt_dispatch_starts_total', { path: 'handoff' }),
      claim: sampleValue(exposition, 'zekt_dispatch_starts_total', { path: 'claim' }),
    };
  };

  it('starts a delivery with room at once, and claims the ones created while its installation was at its cap', async () => {
    await setUpWorld(h);
    const consumer = await h.zekt.store.db
      .selectFrom('accounts')
      .select('account_id')
      .where('login', '=', 'globex')
      .executeTakeFirstOrThrow();
    // The first call holds globex's only slot for a while.
    h.sim.injectFaults({
      method: 'POST',
      path: '/repos/globex/app/dispatches',
      faults: [{ kind: 'latency', delayMs: 1_500 }],
    });
    const runs = [];
    for (let i = 0; i < 3; i++)
      runs.push(await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' }));

    // As each webhook was answered: the first run's delivery was committed leased to this worker
    // (attempt 1 counted), in the transaction that stored it; the other two were left unleased.
    const deliveries = await h.zekt.store.db
      .selectFrom('deliveries')
      .select(['correlation_id', 'lease_owner', 'attempt_count', 'dispatch_state'])
      .orderBy('delivery_id')
      .execute();
    expect(deliveries.map((d) => d.correlation_id)).toEqual(runs.map((r) => String(r.run.id)));
    expect(deliveries[0]).toMatchObject({ lease_owner: expect.any(String), attempt_count: 1 });
    for (const waiting of deliveries.slice(1))
      expect(waiting).toMatchObject({ lease_owner: null, attempt_count: 0, dispatch_state: 'pending' });
    // While globex's slot is taken, the dispatcher has no room for another of its deliveries.
    expect(h.zekt.dispatcher.reserve(consumer.account_id)).toBeNull();

    const received = await eventually(() => {
      const list = h.sim.dispatches({ repository: 'globex/app' });
      return list.length === 3 ? list : undefined;
    }, 20_000);
    expect(
      received.map((d) => (d.clientPayload as { zekt: { correlationId: string } }).zekt.correlationId),
    ).toEqual(runs.map((r) => String(r.run.id)));
    expect(await eventually(async () => ((await starts()).claim === 2 ? starts() : undefined))).toEqual({
      handoff: 1,
      claim: 2,
    });
  });

  it('gives a reserved slot back when the creating transaction fails', async () => {
    const consumer = await h.zekt.store.db
      .selectFrom('accounts')
      .select('account_id')
      .where('login', '=', 'globex')
      .executeTakeFirstOrThrow();
    await h.zekt.dispatcher.idle();
    const failed = withHandoff(
      h.zekt.dispatcher,
      (work) => h.zekt.store.transaction(work),
      async (_trx, handoff) => {
        expect(handoff?.reserve(consumer.account_id)).toMatchObject({ owner: expect.any(String) });
        // The only slot is held by this transaction now.
        expect(h.zekt.dispatcher.reserve(consumer.account_id)).toBeNull();
        throw new Error('the unit failed after reserving');
      },
    );
    await expect(failed).rejects.toThrow('the unit failed after reserving');
    const lease = h.zekt.dispatcher.reserve(consumer.account_id);
    expect(lease).toMatchObject({ owner: expect.any(String) });
    h.zekt.dispatcher.release([consumer.account_id]);
  });
});
