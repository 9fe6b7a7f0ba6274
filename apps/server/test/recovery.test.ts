import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recover } from '../src/cli/recover.js';
import { createRecoveryRunner } from '../src/delivery/recovery-runner.js';
import { type Clock, createManualClock } from '../src/domain/clock.js';
import { DAY_MS } from '../src/domain/duration.js';
import { makeDurable, setUpWorld, type World } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';

/**
 * Bulk recovery. The service's own recovery loop polls once a minute here, so the
 * tests drive recoveries with runners of their own: one batch at a time, with the lease holder
 * and its clock chosen, as two worker processes would.
 */
/** The service, its own recovery loop asleep (it polls once a minute) and pacing off. */
function startRecoveryHarness(clock?: Clock): Promise<Harness> {
  return startHarness({
    transport: 'inject',
    ...(clock ? { clock } : {}),
    env: { ZEKT_POLL_INTERVAL_MS: '60000', ZEKT_INSTALLATION_DISPATCH_RATE: '0' },
  });
}

describe('bulk recovery', () => {
  let h: Harness;
  let world: World;
  let malloryToken: string;
  let failedIds: string[];
  let since: string;

  const base = () => `/api/v1/connections/${world.subscriptionId}/recoveries`;
  const runner = (owner: string, offsetMs = 0, batchSize = 50) =>
    createRecoveryRunner({
      store: h.zekt.store,
      clock: { now: () => Date.now() + offsetMs },
      wakeDispatcher: () => void h.zekt.dispatcher.dispatchDue(),
      owner,
      batchSize,
    });
  async function runToEnd(owner: string) {
    const r = runner(owner);
    while ((await r.runOnce()) > 0) {}
  }
  const deliveriesOfRun = async () =>
    h.zekt.store.db.selectFrom('deliveries').selectAll().orderBy('delivery_id').execute();

  beforeAll(async () => {
    h = await startRecoveryHarness();
    world = await setUpWorld(h);
    await h.sim.createInstallation({
      account: { login: 'initech', type: 'Organization' },
      repositories: ['tps'],
      sender: { login: 'mallory' },
    });
    malloryToken = await h.tokenFor('mallory');
    since = new Date(Date.now() - 60_000).toISOString();
    // Two runs delivered, then an outage: GitHub answers 503 to every dispatch for three runs.
    for (let i = 0; i < 2; i++) await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    await eventually(() => (h.sim.dispatches({ repository: 'globex/app' }).length === 2 ? true : undefined));
    const outage = h.sim.injectFaults({
      method: 'POST',
      path: '/repos/globex/app/dispatches',
      faults: [{ kind: 'status', status: 503 }],
      repeat: true,
    });
    for (let i = 0; i < 3; i++) await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    failedIds = await eventually(async () => {
      const failed = (await deliveriesOfRun()).filter((d) => d.status === 'Failed');
      return failed.length === 3 ? failed.map((d) => d.delivery_id) : undefined;
    }, 20_000);
    h.sim.clearFaults(outage.id);
  });
  afterAll(async () => {
    await h.close();
  });

  it('previews how many deliveries it would replay, changing nothing', async () => {
    const preview = await h.call('GET', `${base()}/preview?since=${encodeURIComponent(since)}`, {
      token: world.consumerToken,
    });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ states: ['failed'], total: 3, toReplay: 3 });
    expect((await deliveriesOfRun()).length).toBe(5);
  });

  it('after an outage, re-sends exactly the failed deliveries, once however often it is asked', async () => {
    const headers = { 'idempotency-key': 'after-outage' };
    const start = await h.call('POST', base(), { token: world.consumerToken, body: { since }, headers });
    expect(start.status).toBe(202);
    expect(start.body).toMatchObject({ status: 'running', total: 3, replayed: 0, skipped: 0 });
    const again = await h.call('POST', base(), { token: world.consumerToken, body: { since }, headers });
    expect([again.status, again.body.id]).toEqual([202, start.body.id]);
    // Another key while it runs: refused, so no delivery is replayed by two recoveries.
    const second = await h.call('POST', base(), { token: world.providerToken, body: { since } });
    expect([second.status, second.body.code, second.body.recoveryId]).toEqual([
      409,
      'recovery_running',
      start.body.id,
    ]);

    await runToEnd('worker-a');
    const done = await h.call('GET', `${base()}/${start.body.id}`, { token: world.providerToken });
    expect(done.body).toMatchObject({ status: 'completed', total: 3, replayed: 3, skipped: 0 });
    expect(done.body.finishedAt).not.toBeNull();

    const replays = (await deliveriesOfRun()).filter((d) => d.replay_of !== null);
    expect(replays.map((d) => d.replay_of).sort()).toEqual([...failedIds].sort());
    // The dispatcher sends them (paced like any dispatch) and GitHub, recovered, accepts them.
    const sent = await eventually(() => {
      const all = h.sim.dispatches({ repository: 'globex/app' });
      return all.length >= 5 ? all : undefined;
    });
    const replayed = sent
      .map((d) => (d.clientPayload as { zekt: { deliveryId: string; isReplay: boolean } }).zekt)
      .filter((z) => z.isReplay);
    expect(replayed.map((z) => z.deliveryId).sort()).toEqual(replays.map((d) => d.delivery_id).sort());
    expect(h.sim.dispatches({ repository: 'globex/app' })).toHaveLength(5);

    // Recovering the same window again finds them replayed already: nothing is sent twice.
    const repeat = await h.call('POST', base(), { token: world.providerToken, body: { since } });
    expect(repeat.body).toMatchObject({ total: 3 });
    await runToEnd('worker-a');
    const after = await h.call('GET', `${base()}/${repeat.body.id}`, { token: world.providerToken });
    expect(after.body).toMatchObject({ status: 'completed', replayed: 0, skipped: 3 });
    expect((await deliveriesOfRun()).filter((d) => d.replay_of !== null)).toHaveLength(3);

    const list = await h.call('GET', base(), { token: world.consumerToken });
    expect(list.body.recoveries.map((r: { id: string }) => r.id)).toEqual([repeat.body.id, start.body.id]);
    const audit = await h.call('GET', '/api/v1/audit?action=recovery.start', { token: world.providerToken });
    expect(audit.body.entries.map((e: { target: { id: string } }) => e.target.id)).toEqual([
      repeat.body.id,
      start.body.id,
    ]);
  });

  it("survives its worker's death: another takes it over after the lease, and can be cancelled", async () => {
    // Three more failures to work on.
    const outage = h.sim.injectFaults({
      method: 'POST',
      path: '/repos/globex/app/dispatches',
      faults: [{ kind: 'status', status: 503 }],
      repeat: true,
    });
    const before = (await deliveriesOfRun()).length;
    for (let i = 0; i < 3; i++) await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    await eventually(async () => {
      const fresh = (await deliveriesOfRun()).slice(before);
      return fresh.length === 3 && fresh.every((d) => d.status === 'Failed') ? true : undefined;
    }, 20_000);
    h.sim.clearFaults(outage.id);

    const start = await h.call('POST', base(), { token: world.consumerToken, body: { since } });
    expect(start.body.total).toBe(6);
    // Worker a replays one delivery (the three replayed earlier are skipped first), then dies.
    const a = runner('worker-a', 0, 4);
    expect(await a.runOnce()).toBe(4);
    // Worker b does not take a job whose lease is live; after the lease it does, where a stopped.
    expect(await runner('worker-b', 0, 1).runOnce()).toBe(0);
    const b = runner('worker-b', 31_000, 1);
    expect(await b.runOnce()).toBe(1);
    const mid = await h.call('GET', `${base()}/${start.body.id}`, { token: world.consumerToken });
    expect(mid.body).toMatchObject({ status: 'running', replayed: 2, skipped: 3 });
    // a comes back: the job is b's now.
    expect(await a.runOnce()).toBe(0);

    const cancel = await h.call('POST', `${base()}/${start.body.id}/cancel`, { token: world.providerToken });
    expect(cancel.body).toMatchObject({ status: 'cancelled', replayed: 2, skipped: 3 });
    expect(await b.runOnce()).toBe(0);
    const twice = await h.call('POST', `${base()}/${start.body.id}/cancel`, { token: world.providerToken });
    expect([twice.status, twice.body.code, twice.body.statusCurrent]).toEqual([
      409,
      'recovery_finished',
      'cancelled',
    ]);
    // Five deliveries replayed in all, each once.
    const replayOf = (await deliveriesOfRun()).filter((d) => d.replay_of !== null).map((d) => d.replay_of);
    expect(new Set(replayOf).size).toBe(replayOf.length);
    expect(replayOf).toHaveLength(5);
    const audit = await h.call('GET', `/api/v1/audit?target=${start.body.id}`, {
      token: world.consumerToken,
    });
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual([
      'recovery.cancel',
      'recovery.start',
    ]);
  });

  it('zekt deliveries recover previews, starts and prints progress until the recovery ends', async () => {
    const output: string[] = [];
    const command = { url: h.url, token: world.consumerToken, write: (t: string) => output.push(t) };
    const options = { connection: world.subscriptionId, since, states: 'failed', pollMs: 20 };
    await recover(command, { ...options, dryRun: true });
    // Six failed in the window; the cancelled recovery left one of them unreplayed.
    expect(output).toEqual([
      `1 deliveries would be replayed (6 failed since ${since}, 5 replayed already)\n`,
    ]);
    output.length = 0;
    const running = recover(command, { ...options, dryRun: false });
    await eventually(() => (output.length > 0 ? true : undefined));
    await runToEnd('worker-c');
    await running;
    expect(output[0]).toMatch(/^recovery rec_\w+ started: 6 deliveries to look at\n$/);
    expect(output.at(-1)).toBe('completed: replayed 1, skipped 5 of 6\n');
    await expect(recover(command, { ...options, since: 'soon', dryRun: true })).rejects.toThrow(
      /answered 400: since must be an ISO 8601 time/,
    );
  });

  it('refuses bad input with problem+json: a foreign connection, a window in the future or over 90 days', async () => {
    const expectProblem = (
      response: { status: number; contentType: string; body: { code: string } },
      status: number,
      code: string,
    ) => {
      expect([response.status, response.body.code]).toEqual([status, code]);
      expect(response.contentType).toContain('application/problem+json');
    };
    expectProblem(
      await h.call('POST', base(), { token: malloryToken, body: { since } }),
      404,
      'connection_not_found',
    );
    expectProblem(
      await h.call('GET', `${base()}/preview?since=${encodeURIComponent(since)}`, { token: malloryToken }),
      404,
      'connection_not_found',
    );
    expectProblem(await h.call('GET', base(), { token: malloryToken }), 404, 'connection_not_found');
    const future = new Date(Date.now() + DAY_MS).toISOString();
    expectProblem(
      await h.call('POST', base(), { token: world.consumerToken, body: { since: future } }),
      400,
      'invalid_recovery_window',
    );
    const tooOld = new Date(Date.now() - 91 * DAY_MS).toISOString();
    expectProblem(
      await h.call('POST', base(), { token: world.consumerToken, body: { since: tooOld } }),
      400,
      'invalid_recovery_window',
    );
    expectProblem(
      await h.call('GET', `${base()}/preview?since=${encodeURIComponent(tooOld)}`, {
        token: world.consumerToken,
      }),
      400,
      'invalid_recovery_window',
    );
    expectProblem(
      await h.call('POST', base(), { token: world.consumerToken, body: { since: 'yesterday' } }),
      400,
      'invalid_recovery_window',
    );
    expectProblem(
      await h.call('POST', base(), { token: world.consumerToken, body: { since, states: ['completed'] } }),
      400,
      'invalid_request',
    );
    expectProblem(
      await h.call('GET', `${base()}/rec_nope`, { token: world.consumerToken }),
      404,
      'recovery_not_found',
    );
    // None of the refused requests made a recovery.
    const list = await h.call('GET', base(), { token: world.consumerToken });
    expect(list.body.recoveries.every((r: { status: string }) => r.status !== 'running')).toBe(true);
    expect(list.body.recoveries).toHaveLength(4);

    // A revoked subscription gets nothing more, recovered or not.
    await h.call('POST', `/api/v1/subscriptions/${world.subscriptionId}/revoke`, {
      token: world.providerToken,
    });
    expectProblem(
      await h.call('POST', base(), { token: world.consumerToken, body: { since } }),
      409,
      'subscription_inactive',
    );
  });
});

describe('bulk recovery of deliveries not started', () => {
  it('replays the durable deliveries no workflow started for, and leaves the failed ones to states=failed', async () => {
    const clock = createManualClock(Date.now());
    const h = await startRecoveryHarness(clock);
    try {
      const world = await setUpWorld(h);
      await makeDurable(h, world);
      const since = new Date(clock.now() - 60_000).toISOString();
      // globex/app has no workflow listening: GitHub accepts the dispatch (204) and nothing runs.
      await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
      const [accepted] = await eventually(async () => {
        const rows = await h.zekt.store.db.selectFrom('deliveries').selectAll().execute();
        return rows.length === 1 && rows[0]?.status === 'Dispatched' && rows[0].awaiting_start_since !== null
          ? rows
          : undefined;
      });
      const base = `/api/v1/connections/${world.subscriptionId}/recoveries`;
      const preview = (states: string) =>
        h.call('GET', `${base}/preview?since=${encodeURIComponent(since)}&states=${states}`, {
          token: world.consumerToken,
        });
      // Not flagged yet: a delivery still waiting for its workflow is no candidate.
      expect((await preview('not_started')).body).toMatchObject({ total: 0 });

      clock.advance(10 * 60_000);
      expect((await h.zekt.notStarted.flag()).map((f) => f.deliveryId)).toEqual([accepted?.delivery_id]);
      expect((await preview('not_started')).body).toMatchObject({
        states: ['not_started'],
        total: 1,
        toReplay: 1,
      });
      expect((await preview('failed')).body).toMatchObject({ total: 0 });

      const start = await h.call('POST', base, {
        token: world.consumerToken,
        body: { since, states: ['not_started'] },
      });
      expect(start.status).toBe(202);
      const runner = createRecoveryRunner({
        store: h.zekt.store,
        clock,
        wakeDispatcher: () => void h.zekt.dispatcher.dispatchDue(),
        owner: 'worker-a',
        batchSize: 50,
      });
      while ((await runner.runOnce()) > 0) {}
      const done = await h.call('GET', `${base}/${start.body.id}`, { token: world.consumerToken });
      expect(done.body).toMatchObject({ status: 'completed', total: 1, replayed: 1, skipped: 0 });
      const replays = await h.zekt.store.db
        .selectFrom('deliveries')
        .select('replay_of')
        .where('replay_of', 'is not', null)
        .execute();
      expect(replays).toEqual([{ replay_of: accepted?.delivery_id }]);
    } finally {
      await h.close();
    }
  });
});

describe('bulk recoveries of several connections', () => {
  it('share the runner: a long recovery does not hold a later one of another connection behind it', async () => {
    const clock = createManualClock(Date.now());
    const h = await startRecoveryHarness(clock);
    try {
      const world = await setUpWorld(h);
      await h.sim.createInstallation({
        account: { login: 'initech', type: 'Organization' },
        repositories: ['tps'],
        sender: { login: 'mallory' },
      });
      const malloryToken = await h.tokenFor('mallory');
      const second = await h.call('POST', '/api/v1/subscriptions', {
        token: malloryToken,
        body: { serviceId: world.serviceId, deliversTo: 'initech/tps' },
      });
      expect(second.status).toBe(201);
      await h.call('POST', `/api/v1/subscriptions/${second.body.id}/approve`, { token: world.providerToken });
      const since = new Date(clock.now() - 60_000).toISOString();
      // An outage at both consumers: every delivery of three runs fails, three per connection.
      for (const repository of ['globex/app', 'initech/tps']) {
        h.sim.injectFaults({
          method: 'POST',
          path: `/repos/${repository}/dispatches`,
          faults: [{ kind: 'status', status: 503 }],
          repeat: true,
        });
      }
      for (let i = 0; i < 3; i++) await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
      await eventually(async () => {
        const failed = await h.zekt.store.db
          .selectFrom('deliveries')
          .select('delivery_id')
          .where('status', '=', 'Failed')
          .execute();
        return failed.length === 6 ? true : undefined;
      }, 20_000);
      h.sim.clearFaults();
      // A recovery's window ends when it is made: after the failures.
      clock.advance(1);

      // The first connection's recovery is started first; the second's after it.
      const first = await h.call('POST', `/api/v1/connections/${world.subscriptionId}/recoveries`, {
        token: world.consumerToken,
        body: { since },
      });
      clock.advance(1);
      const later = await h.call('POST', `/api/v1/connections/${second.body.id}/recoveries`, {
        token: malloryToken,
        body: { since },
      });
      expect([first.body.total, later.body.total]).toEqual([3, 3]);

      // One worker, one delivery per batch: which recovery moves at each turn.
      const runner = createRecoveryRunner({
        store: h.zekt.store,
        clock,
        wakeDispatcher: () => undefined,
        owner: 'the-only-worker',
        batchSize: 1,
      });
      const progress = async () =>
        new Map(
          (
            await h.zekt.store.db
              .selectFrom('recoveries')
              .select(['recovery_id', 'replayed', 'status'])
              .execute()
          ).map((row) => [row.recovery_id, row]),
        );
      const turns: string[] = [];
      for (let turn = 0; turn < 6; turn++) {
        const before = await progress();
        clock.advance(1);
        expect(await runner.runOnce()).toBe(1);
        const after = await progress();
        const moved = [...after.keys()].filter((id) => after.get(id)!.replayed !== before.get(id)!.replayed);
        turns.push(moved.map((id) => (id === first.body.id ? 'first' : 'later')).join(','));
      }
      expect(turns).toEqual(['first', 'later', 'first', 'later', 'first', 'later']);
      while ((await runner.runOnce()) > 0) clock.advance(1);
      const finished = await progress();
      expect(finished.get(first.body.id)).toMatchObject({ status: 'completed', replayed: 3 });
      expect(finished.get(later.body.id)).toMatchObject({ status: 'completed', replayed: 3 });
    } finally {
      await h.close();
    }
  });
});
