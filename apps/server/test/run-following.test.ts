import { afterEach, describe, expect, it } from 'vitest';
import { claimRunsToFollow, recordRunFollow } from '../src/store/run-following.js';
import { setUpWorld, type World } from './support/demo-world.js';
import { eventually, type Harness, type HarnessOptions, startHarness } from './support/harness.js';

/**
 * The run follower (domain/run-following.ts): with COMPLETION off, Zekt reads the consumer
 * run of a durable workflow_dispatch delivery itself. Its reads take the consumer installation's
 * pacing slots, shared with dispatches, and its queue is the delivery table: a worker that dies
 * holding a run loses nothing.
 */
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function start(options: HarnessOptions): Promise<{ h: Harness; world: World }> {
  h = await startHarness({ transport: 'inject', ...options });
  const world = await setUpWorld(h);
  h.sim.defineConsumerWorkflow({
    repository: 'globex/app',
    workflow: 'on-zekt.yml',
    on: { workflow_dispatch: { inputs: { zekt: { required: true } } } },
  });
  const patched = await h.call('PATCH', `/api/v1/subscriptions/${world.subscriptionId}`, {
    token: world.consumerToken,
    body: { deliveryMode: 'workflow_dispatch', workflow: 'on-zekt.yml', durable: true },
  });
  expect(patched.status).toBe(200);
  return { h, world };
}

async function deliveryRow(service: Harness) {
  return service.zekt.store.db
    .selectFrom('deliveries')
    .select(['delivery_id', 'status', 'run_follow_at', 'run_follow_reads', 'lease_owner', 'consumer_run_id'])
    .executeTakeFirstOrThrow();
}

describe('following a consumer run', () => {
  it('reads within the installation’s pace, after the dispatch’s slot, and reaches the run’s end', async () => {
    // One call a second for globex's installation; the follow schedule alone would read at 100 ms.
    const { h } = await start({
      env: { ZEKT_INSTALLATION_DISPATCH_RATE: '60', ZEKT_RUN_FOLLOW_SCHEDULE: '100ms' },
    });
    await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    const done = await eventually(async () => {
      const row = await deliveryRow(h);
      return row.status === 'Completed' ? row : undefined;
    }, 20_000);
    expect(done).toMatchObject({ run_follow_at: null, run_follow_reads: 1 });
    const calls = h.sim
      .journal()
      .filter((entry) => /\/repos\/globex\/app\/actions\/(workflows|runs)\//.test(entry.path));
    expect(calls.map((entry) => `${entry.method} ${entry.status}`)).toEqual(['POST 200', 'GET 200']);
    // The read waited for the installation's next slot, a second after the dispatch's. The
    // dispatch's slot began when its attempt did (its token was fetched after), so the spacing is
    // read against the attempt's start and the installation's schedule, not the dispatch's arrival.
    const attempt = await h.zekt.store.db
      .selectFrom('delivery_attempts')
      .select('started_at')
      .executeTakeFirstOrThrow();
    const schedule = await h.zekt.store.db
      .selectFrom('pacing_slots')
      .select('next_slot_at')
      .executeTakeFirstOrThrow();
    const readSlot = schedule.next_slot_at - 1_000;
    expect(readSlot).toBeGreaterThanOrEqual(attempt.started_at + 1_000);
    expect(Date.parse(calls[1]!.receivedAt)).toBeGreaterThanOrEqual(readSlot);
  });

  it('takes over the runs completion tracking was to report when COMPLETION is switched off', async () => {
    const { h, world } = await start({
      env: { ZEKT_RUN_FOLLOW_SCHEDULE: '100ms', ZEKT_INSTALLATION_DISPATCH_RATE: '0' },
    });
    const completion = (enabled: boolean) =>
      h.call('PUT', '/api/v1/repositories/globex/app/completion-tracking', {
        token: world.consumerToken,
        body: { enabled },
      });
    expect((await completion(true)).status).toBe(200);
    // A run that waits for a runner long enough for the switch to go off meanwhile.
    h.sim.defineConsumerWorkflow({
      repository: 'globex/app',
      workflow: 'slow.yml',
      on: { workflow_dispatch: { inputs: { zekt: { required: true } } } },
      startDelayMs: 1_500,
    });
    await h.call('PATCH', `/api/v1/subscriptions/${world.subscriptionId}`, {
      token: world.consumerToken,
      body: { workflow: 'slow.yml' },
    });
    await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    const accepted = await eventually(async () => {
      const row = await deliveryRow(h);
      return row.consumer_run_id !== null ? row : undefined;
    });
    // COMPLETION on: the run's webhooks will report it, nothing is read.
    expect(accepted).toMatchObject({ status: 'Dispatched', run_follow_at: null });
    expect((await completion(false)).status).toBe(200);
    const done = await eventually(async () => {
      const row = await deliveryRow(h);
      return row.status === 'Completed' ? row : undefined;
    }, 20_000);
    expect(done.run_follow_reads).toBeGreaterThanOrEqual(1);
    expect(
      h.sim.journal().some((entry) => entry.path.endsWith(`/actions/runs/${accepted.consumer_run_id}`)),
    ).toBe(true);
  });

  it('loses nothing when the worker reading a run dies: its lease expires and another worker reads it', async () => {
    // The loops do not run: the test plays the router, the dispatcher and two followers.
    const { h } = await start({
      workers: false,
      env: { ZEKT_RUN_FOLLOW_SCHEDULE: '100ms', ZEKT_INSTALLATION_DISPATCH_RATE: '0' },
    });
    await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    await h.zekt.router.routeDue();
    expect(await h.zekt.dispatcher.dispatchDue()).toBe(1);
    const accepted = await deliveryRow(h);
    expect(accepted.consumer_run_id).not.toBeNull();
    expect(accepted.run_follow_at).not.toBeNull();
    await eventually(() =>
      h.sim.consumerRuns().find((run) => run.status === 'completed') ? true : undefined,
    );

    // A worker claims the run and dies before it reads it (its lease: half a second).
    const store = h.zekt.store;
    const claimedAt = Math.max(Date.now(), Number(accepted.run_follow_at));
    const claimed = await store.transaction((trx) =>
      claimRunsToFollow(trx, store.dialect, {
        owner: 'dead-worker',
        now: claimedAt,
        leaseMs: 500,
        limit: 10,
      }),
    );
    expect(claimed.map((run) => run.deliveryId)).toEqual([accepted.delivery_id]);
    expect(await h.zekt.runFollower.followDue()).toBe(0);
    expect((await deliveryRow(h)).status).toBe('Dispatched');

    // Once the lease expired, this worker takes the run over and reads it.
    await eventually(async () => ((await h.zekt.runFollower.followDue()) === 1 ? true : undefined), 5_000);
    expect(await deliveryRow(h)).toMatchObject({
      status: 'Completed',
      run_follow_at: null,
      run_follow_reads: 1,
      lease_owner: null,
    });
    // The dead worker's late write is refused: the record stays as the live worker left it.
    const late = await store.transaction((trx) =>
      recordRunFollow(trx, {
        deliveryId: accepted.delivery_id,
        owner: 'dead-worker',
        followAt: Date.now(),
        read: true,
        now: Date.now(),
      }),
    );
    expect(late).toBe(false);
    expect(await deliveryRow(h)).toMatchObject({ run_follow_at: null, run_follow_reads: 1 });
  });
});
