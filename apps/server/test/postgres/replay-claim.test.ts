import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRecoveryRunner } from '../../src/delivery/recovery-runner.js';
import { setUpWorld, type World } from '../support/demo-world.js';
import { type ApiResponse, eventually, type Harness, startHarness } from '../support/harness.js';

/**
 * A replay claims the delivery it replays (`replayed_by`, one conditional update) before it
 * creates anything. On PostgreSQL two replays of one delivery can both read it unreplayed — READ
 * COMMITTED, no lock on the read — and used to both create a replay: a bulk recovery and a single
 * replay, or two single replays, sent the same delivery twice with two new delivery ids. Here a
 * third session holds the delivery's row lock while both read it, so both are certainly past their
 * reads when the lock is let go; exactly one replay may come out. (SQLite has one writer: a
 * transaction's reads and writes run together, so the race cannot happen there — the
 * process-level recovery-concurrency test runs on both stores.)
 */
let h: Harness;
let world: World;
let blocker: pg.Client;

beforeAll(async () => {
  h = await startHarness({
    // The service's own recovery loop stays out of the way; the test runs a runner of its own.
    env: { ZEKT_POLL_INTERVAL_MS: '60000', ZEKT_INSTALLATION_DISPATCH_RATE: '0' },
  });
  world = await setUpWorld(h);
  if (h.config.database.kind !== 'postgres') throw new Error('PostgreSQL only');
  blocker = new pg.Client({ connectionString: h.config.database.url });
  await blocker.connect();
});

afterAll(async () => {
  await blocker?.end();
  await h?.close();
});

/** One delivery of the world's connection that failed (GitHub answered 503). */
async function failedDelivery(): Promise<string> {
  const outage = h.sim.injectFaults({
    method: 'POST',
    path: '/repos/globex/app/dispatches',
    faults: [{ kind: 'status', status: 503 }],
    repeat: true,
  });
  const before = new Set(
    (await h.zekt.store.db.selectFrom('deliveries').select('delivery_id').execute()).map(
      (r) => r.delivery_id,
    ),
  );
  await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
  const id = await eventually(async () => {
    const rows = await h.zekt.store.db
      .selectFrom('deliveries')
      .select(['delivery_id', 'status'])
      .where('replay_of', 'is', null)
      .execute();
    const fresh = rows.find((row) => !before.has(row.delivery_id));
    return fresh?.status === 'Failed' ? fresh.delivery_id : undefined;
  }, 20_000);
  h.sim.clearFaults(outage.id);
  return id;
}

/**
 * Runs `contenders` while the blocker holds the delivery's row lock, lets go once all of them wait
 * for it (they have read the delivery by then), and returns what each answered.
 */
async function raceOn<T extends unknown[]>(
  deliveryId: string,
  contenders: { [K in keyof T]: () => Promise<T[K]> },
): Promise<T> {
  await blocker.query('begin');
  await blocker.query('select delivery_id from deliveries where delivery_id = $1 for update', [deliveryId]);
  const running = Promise.all(contenders.map((run) => run()));
  try {
    await eventually(async () => {
      const { rows } = await blocker.query(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
      );
      return rows[0].n >= contenders.length ? true : undefined;
    }, 20_000);
  } finally {
    await blocker.query('rollback');
  }
  return (await running) as T;
}

async function replaysOf(deliveryId: string) {
  return h.zekt.store.db
    .selectFrom('deliveries')
    .select('delivery_id')
    .where('replay_of', '=', deliveryId)
    .execute()
    .then((rows) => rows.map((row) => row.delivery_id));
}

const replay = (deliveryId: string, headers: Record<string, string> = {}) =>
  h.call('POST', `/api/replay/${deliveryId}`, { token: world.consumerToken, headers });

describe('a replay claims the delivery before it creates the copy', () => {
  it('a bulk recovery and a single replay of one failed delivery, at once: one replay, the other is told', {
    timeout: 60_000,
  }, async () => {
    const deliveryId = await failedDelivery();
    const since = new Date(Date.now() - 60 * 60_000).toISOString();
    const start = await h.call('POST', `/api/v1/connections/${world.subscriptionId}/recoveries`, {
      token: world.consumerToken,
      body: { since },
    });
    expect(start.status).toBe(202);
    const runner = createRecoveryRunner({
      store: h.zekt.store,
      clock: { now: () => Date.now() },
      wakeDispatcher: () => undefined,
      owner: 'worker-race',
    });

    const [single] = await raceOn<[ApiResponse, number]>(deliveryId, [
      () => replay(deliveryId),
      () => runner.runOnce(),
    ]);
    const replays = await replaysOf(deliveryId);
    expect(replays).toHaveLength(1);
    const item = await h.zekt.store.db
      .selectFrom('recovery_items')
      .selectAll()
      .where('recovery_id', '=', start.body.id)
      .where('delivery_id', '=', deliveryId)
      .executeTakeFirstOrThrow();
    if (single.status === 202) {
      // The single replay won: the recovery found the delivery replayed and left it.
      expect(single.body.deliveryId).toBe(replays[0]);
      expect(item).toMatchObject({ outcome: 'skipped', replay_id: null });
    } else {
      // The recovery won: the single replay created nothing and names the recovery's replay.
      expect(single.status).toBe(409);
      expect(single.body).toMatchObject({ code: 'replay_conflict', replayId: replays[0] });
      expect(item).toMatchObject({ outcome: 'replayed', replay_id: replays[0] });
    }
    const original = await h.zekt.store.db
      .selectFrom('deliveries')
      .select('replayed_by')
      .where('delivery_id', '=', deliveryId)
      .executeTakeFirstOrThrow();
    expect(original.replayed_by).toBe(replays[0]);
    while ((await runner.runOnce()) > 0) {}
  });

  it('two single replays of one delivery at once: one replay, the other answers 409 naming it', async () => {
    const deliveryId = await failedDelivery();
    const answers = await raceOn<[ApiResponse, ApiResponse]>(deliveryId, [
      () => replay(deliveryId),
      () => replay(deliveryId),
    ]);
    const replays = await replaysOf(deliveryId);
    expect(replays).toHaveLength(1);
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
    const won = answers.find((a) => a.status === 202)!;
    const lost = answers.find((a) => a.status === 409)!;
    expect(won.body.deliveryId).toBe(replays[0]);
    expect(lost.contentType).toMatch(/^application\/problem\+json/);
    expect(lost.body).toMatchObject({ code: 'replay_conflict', replayId: replays[0] });

    // Asked again, after the first, it replays once more: a replay of a replayed delivery is allowed.
    const again = await replay(deliveryId);
    expect(again.status).toBe(202);
    expect(await replaysOf(deliveryId)).toHaveLength(2);
  });

  it('two requests with the same Idempotency-Key at once: both answer the one replay', async () => {
    const deliveryId = await failedDelivery();
    const headers = { 'idempotency-key': 'same-key-at-once' };
    const answers = await raceOn<[ApiResponse, ApiResponse]>(deliveryId, [
      () => replay(deliveryId, headers),
      () => replay(deliveryId, headers),
    ]);
    const replays = await replaysOf(deliveryId);
    expect(replays).toHaveLength(1);
    expect(answers.map((a) => [a.status, a.body.deliveryId])).toEqual([
      [202, replays[0]],
      [202, replays[0]],
    ]);
  });
});
