import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Harness, startHarness } from './support/harness.js';
import { publishAcmeDeploys, succeeding } from './support/published-service.js';

/**
 * Tenant isolation in the dispatcher: two consumers of one service, and one consumer's
 * GitHub takes 8 s to answer. The pool of in-flight calls is refilled as calls end, and one
 * installation may hold only part of it, so the other consumer's deliveries all go out while the
 * slow consumer's first call is still waiting. Asserted on the order of what GitHub received,
 * never on timings.
 */
describe('a consumer whose GitHub is slow', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      transport: 'inject',
      env: {
        ZEKT_INSTALLATION_DISPATCH_RATE: '0',
        // A small pool makes the point: the slow installation may fill only its share of it.
        ZEKT_DISPATCH_CONCURRENCY: '4',
        ZEKT_INSTALLATION_CONCURRENCY: '2',
      },
    });
  });
  afterAll(async () => {
    await h.close();
  });

  it("does not delay another consumer's deliveries", { timeout: 90_000 }, async () => {
    await h.sim.createInstallation({
      account: { login: 'acme' },
      repositories: ['api'],
      sender: { login: 'alice' },
    });
    await h.sim.createInstallation({
      account: { login: 'globex' },
      repositories: ['app'],
      sender: { login: 'bob' },
    });
    await h.sim.createInstallation({
      account: { login: 'initech' },
      repositories: ['tps'],
      sender: { login: 'carol' },
    });
    const [alice, bob, carol] = [
      await h.tokenFor('alice'),
      await h.tokenFor('bob'),
      await h.tokenFor('carol'),
    ];
    const ok = succeeding((method, path, token, body) => h.call(method, path, { token, body }));
    const service = await publishAcmeDeploys(ok, alice, 'deploys');
    for (const [token, repository] of [
      [bob, 'globex/app'],
      [carol, 'initech/tps'],
    ] as const) {
      const subscription = await ok('POST', '/api/v1/subscriptions', token, {
        serviceId: service.id,
        deliversTo: repository,
      });
      await ok('POST', `/api/v1/subscriptions/${subscription.id}/approve`, alice);
    }
    h.sim.injectFaults({
      method: 'POST',
      path: '/repos/initech/tps/dispatches',
      faults: [{ kind: 'latency', delayMs: 8_000 }],
      repeat: true,
    });

    const runs = 6;
    for (let i = 0; i < runs; i++)
      await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    // GitHub records a dispatch once it answers it: the slow consumer's first one after 8 s.
    const order = await eventually(() => {
      const received = h.sim.dispatches().map((d) => d.repository);
      return received.includes('initech/tps') ? received : undefined;
    }, 30_000);
    const firstSlow = order.indexOf('initech/tps');
    expect(order.slice(0, firstSlow), order.join(', ')).toEqual(Array(runs).fill('globex/app'));

    // The cap is of calls to GitHub in flight: the slow installation never had more than 2 at once.
    // Each recorded attempt spans [started_at, started_at + duration_ms], and an attempt starts
    // after the call it waited for ended, so the spans overlap only where calls did.
    const slowAttempts = await eventually(async () => {
      const rows = await h.zekt.store.db
        .selectFrom('delivery_attempts as t')
        .innerJoin('deliveries as d', 'd.delivery_id', 't.delivery_id')
        .innerJoin('repositories as r', 'r.repository_id', 'd.consumer_repository_id')
        .select(['t.started_at', 't.duration_ms'])
        .where('r.full_name', '=', 'initech/tps')
        .execute();
      // Two rounds of the slow installation's calls: the second could only start as the first ended.
      return rows.length >= 4 ? rows : undefined;
    }, 40_000);
    const edges = slowAttempts.flatMap((a) => [
      { at: Number(a.started_at), change: 1 },
      { at: Number(a.started_at) + a.duration_ms, change: -1 },
    ]);
    // At equal times an end comes before a start: a call that starts as another ends is not beside it.
    edges.sort((a, b) => a.at - b.at || a.change - b.change);
    let inFlight = 0;
    let most = 0;
    for (const edge of edges) {
      inFlight += edge.change;
      most = Math.max(most, inFlight);
    }
    expect(most).toBe(2);
  });
});
