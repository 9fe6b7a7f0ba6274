import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStoreConfig } from '../src/config.js';
import { openStore, type Store } from '../src/store/store.js';
import { eventually } from './support/harness.js';
import { type ProcessStack, prepareProcessStack } from './support/process-stack.js';
import { type JsonBody, json, ProcessGroup, type SimProcessInfo } from './support/processes.js';
import { type RemoteWorld, setUpRemoteWorld } from './support/remote-world.js';

/**
 * Bulk recoveries under real concurrency, as deployed: one API process and two worker processes
 * on one store. Twelve requests to start a recovery of the same connection arrive at once, from
 * both parties: one recovery runs, every other request is told which one (409, not a 500), and the
 * two workers replay each failed delivery exactly once. On PostgreSQL (READ COMMITTED) the route
 * used to check for a running recovery and then insert, so several started, and the workers
 * replayed the same deliveries once per recovery — each copy a new delivery id, which no consumer's
 * deduplication can catch.
 */
const FAILED = 24;
const REQUESTS = 12;
const processes = new ProcessGroup();
let stack: ProcessStack;
let sim: SimProcessInfo;
let zektUrl: string;
let zektEnv: Record<string, string>;
let world: RemoteWorld;
let store: Store;

beforeAll(async () => {
  stack = await prepareProcessStack(processes, {
    name: 'recovery-concurrency',
    env: { ZEKT_INSTALLATION_DISPATCH_RATE: '0', ZEKT_POLL_INTERVAL_MS: '200' },
  });
  ({ sim, zektUrl, zektEnv } = stack);
  await processes.startZekt(zektUrl, zektEnv, ['--role', 'api']);
  world = await setUpRemoteWorld({ processes, sim, zektUrl, zektEnv, workflow: 'deploy.yml' });
  store = await openStore(loadStoreConfig(zektEnv));
}, 120_000);

afterAll(async () => {
  await store?.close();
  await stack?.close();
});

describe('concurrent bulk recoveries of one connection', () => {
  it('start one recovery however many requests arrive at once, and replay each failed delivery once', {
    timeout: 120_000,
  }, async () => {
    // An outage: every dispatch to globex/app fails, so every delivery of these runs is Failed.
    await json('POST', `${sim.url}/_sim/faults`, {
      method: 'POST',
      path: '/repos/globex/app/dispatches',
      faults: [{ kind: 'status', status: 503 }],
      repeat: true,
    });
    const since = new Date(Date.now() - 60_000).toISOString();
    // A worker dispatches them (and fails them); it is gone before the recovery is asked for, so
    // no recovery can end while the requests to start one are still being answered.
    const dispatcher = await processes.startWorker({ ...zektEnv, ZEKT_WORKER_ID: 'worker-0' });
    for (let i = 0; i < FAILED; i++) {
      const run = await json('POST', `${sim.url}/_sim/repos/acme/api/runs`, { workflow: 'deploy.yml' });
      expect(run.status).toBe(201);
    }
    const failedIds = await eventually(async () => {
      const rows = await store.db
        .selectFrom('deliveries')
        .select(['delivery_id', 'status'])
        .where('subscription_id', '=', world.subscriptionId)
        .execute();
      return rows.length === FAILED && rows.every((row) => row.status === 'Failed')
        ? rows.map((row) => row.delivery_id)
        : undefined;
    }, 60_000);
    await json('DELETE', `${sim.url}/_sim/faults`);
    await processes.kill(dispatcher);

    const base = `${zektUrl}/api/v1/connections/${world.subscriptionId}/recoveries`;
    const answers = await Promise.all(
      Array.from({ length: REQUESTS }, (_, i) =>
        json('POST', base, { since }, i % 2 === 0 ? world.alice : world.bob),
      ),
    );
    const started = answers.filter((answer) => answer.status === 202);
    expect(started, JSON.stringify(answers.map((a) => [a.status, a.body.code ?? a.body.id]))).toHaveLength(1);
    const recoveryId = started[0]!.body.id as string;
    const refused = answers.filter((answer) => answer.status !== 202);
    for (const answer of refused) {
      expect(answer.status).toBe(409);
      expect(answer.body).toMatchObject({ code: 'recovery_running', recoveryId });
    }
    const running = await store.db
      .selectFrom('recoveries')
      .select('recovery_id')
      .where('subscription_id', '=', world.subscriptionId)
      .execute();
    expect(running.map((row) => row.recovery_id)).toEqual([recoveryId]);

    // Two workers run it.
    await processes.startWorker({ ...zektEnv, ZEKT_WORKER_ID: 'worker-1' });
    await processes.startWorker({ ...zektEnv, ZEKT_WORKER_ID: 'worker-2' });
    const done = await eventually(async () => {
      const answer = await json('GET', `${base}/${recoveryId}`, undefined, world.bob);
      return answer.body.status === 'completed' ? (answer.body as JsonBody) : undefined;
    }, 60_000);
    expect(done).toMatchObject({ total: FAILED, replayed: FAILED, skipped: 0 });

    const replays = await store.db
      .selectFrom('deliveries')
      .select(['delivery_id', 'replay_of'])
      .where('subscription_id', '=', world.subscriptionId)
      .where('replay_of', 'is not', null)
      .execute();
    expect(replays.map((row) => row.replay_of).sort()).toEqual([...failedIds].sort());
    // GitHub, back, receives each replay once.
    const sent = await eventually(async () => {
      const list = (await json('GET', `${sim.url}/_sim/dispatches?repository=globex/app`)).body as JsonBody[];
      const replayed = list.filter((d) => d.clientPayload.zekt.isReplay);
      return replayed.length >= FAILED ? replayed : undefined;
    }, 60_000);
    expect(sent).toHaveLength(FAILED);
    expect(new Set(sent.map((d) => d.clientPayload.zekt.deliveryId)).size).toBe(FAILED);
  });
});
