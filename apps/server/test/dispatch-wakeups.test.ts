import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDurable, setUpWorld, type World } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';

/**
 * The dispatcher sleeps until the next delivery is due, not until its next poll: the
 * next-due look-up is an index seek for the first pending delivery due after the last claim. With
 * polls a minute apart (the longest allowed), a retry due in 300 ms must still go out — only that look-up can wake the
 * dispatcher for it.
 */
describe('the dispatcher between polls', () => {
  let h: Harness;
  let world: World;
  beforeAll(async () => {
    h = await startHarness({
      transport: 'inject',
      env: {
        ZEKT_POLL_INTERVAL_MS: '60000',
        ZEKT_RETRY_SCHEDULE: '0ms,300ms,300ms',
        ZEKT_INSTALLATION_DISPATCH_RATE: '0',
      },
    });
    world = await setUpWorld(h);
  });
  afterAll(async () => {
    await h.close();
  });

  it('wakes for a retry when it is due, with no poll to find it', async () => {
    await makeDurable(h, world);
    h.sim.injectFaults({
      method: 'POST',
      path: '/repos/globex/app/dispatches',
      faults: [
        { kind: 'status', status: 503 },
        { kind: 'status', status: 502 },
      ],
    });
    await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    // GitHub records the dispatch when it answers; Zekt records the attempt after the answer.
    const row = await eventually(async () => {
      const delivery = await h.zekt.store.db
        .selectFrom('deliveries')
        .select(['dispatch_state', 'attempt_count'])
        .executeTakeFirst();
      return delivery?.dispatch_state === 'pending' ? undefined : delivery;
    }, 15_000);
    expect(row).toEqual({ dispatch_state: 'accepted', attempt_count: 3 });
    expect(h.sim.dispatches({ repository: 'globex/app' })).toHaveLength(1);
  });
});
