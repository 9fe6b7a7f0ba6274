import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Harness, startHarness } from './support/harness.js';
import { publishAcmeDeploys, succeeding } from './support/published-service.js';

/**
 * Per-installation pacing: each consumer installation gets its own dispatch rate, so a
 * backlog for one tenant does not hold up another's deliveries.
 */
describe('per-installation pacing', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ transport: 'inject', env: { ZEKT_INSTALLATION_DISPATCH_RATE: '20' } });
  });
  afterAll(async () => {
    await h.close();
  });

  it("spaces one installation's dispatches while another installation's go out at once", async () => {
    await h.sim.createInstallation({
      account: { login: 'acme' },
      repositories: ['api'],
      sender: { login: 'alice' },
    });
    const busy = ['app1', 'app2', 'app3'];
    await h.sim.createInstallation({
      account: { login: 'globex' },
      repositories: busy,
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
    const subscribers: Array<[string, string]> = [
      ...busy.map((r) => [bob, `globex/${r}`] as [string, string]),
      [carol, 'initech/tps'],
    ];
    for (const [token, repository] of subscribers) {
      const subscription = await ok('POST', '/api/v1/subscriptions', token, {
        serviceId: service.id,
        deliversTo: repository,
      });
      await ok('POST', `/api/v1/subscriptions/${subscription.id}/approve`, alice);
    }

    await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    const order = await eventually(() => {
      const dispatched = h.sim.dispatches().map((d) => d.repository);
      return dispatched.length === 4 ? dispatched : undefined;
    }, 20_000);
    // globex's second dispatch waits a full slot (3 s); initech's first is not behind it.
    const initech = order.indexOf('initech/tps');
    const globex = order
      .map((repository, index) => (repository.startsWith('globex/') ? index : -1))
      .filter((i) => i >= 0);
    expect(globex).toHaveLength(3);
    expect(initech, order.join(', ')).toBeLessThan(globex[1]!);
    // Deferring for a slot is not an attempt: every delivery was attempted exactly once.
    // (GitHub records a dispatch before Zekt has read the answer: wait for Zekt's side.)
    const deliveries = await eventually(async () => {
      const rows = await h.zekt.store.db
        .selectFrom('deliveries')
        .select(['attempt_count', 'dispatch_state'])
        .execute();
      return rows.length === 4 && rows.every((d) => d.dispatch_state === 'accepted') ? rows : undefined;
    });
    expect(deliveries.map((d) => d.attempt_count)).toEqual([1, 1, 1, 1]);
    const attempts = await h.zekt.store.db.selectFrom('delivery_attempts').select('number').execute();
    expect(attempts.map((a) => a.number)).toEqual([1, 1, 1, 1]);
  });
});
