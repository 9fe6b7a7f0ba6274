import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/harness.js';
import { type ProcessStack, prepareProcessStack } from './support/process-stack.js';
import { json, ProcessGroup } from './support/processes.js';
import { setUpRemoteWorld } from './support/remote-world.js';

/**
 * The crash ledger: `zekt serve` is killed with SIGKILL at random moments while durable
 * events stream in and GitHub's dispatch endpoint misbehaves (503, 429 with Retry-After, hangs,
 * resets); it is restarted on the same store each time, and the webhooks GitHub could not deliver
 * meanwhile are redelivered, as an operator (or GitHub's redelivery) does. Then every run whose
 * completion webhook Zekt acknowledged was dispatched — accepted by the simulator — at least once:
 * none lost. Duplicates are bounded: a kill can repeat only the dispatches in flight, at most one
 * batch of claimed deliveries (20) per kill. Runs on SQLite and on PostgreSQL.
 *
 * `npm test` runs a short ledger; `npm run ledger` a long one (ZEKT_LEDGER_EVENTS, ZEKT_LEDGER_KILLS,
 * ZEKT_LEDGER_SEED).
 */
const EVENTS = Number(process.env.ZEKT_LEDGER_EVENTS ?? 150);
const KILLS = Number(process.env.ZEKT_LEDGER_KILLS ?? 3);
const SEED = Number(process.env.ZEKT_LEDGER_SEED ?? 1110);
const DISPATCH_BATCH = 20;
const SENDERS = 4;

/** mulberry32: the same seed gives the same kill moments. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const processes = new ProcessGroup();
let stack: ProcessStack;

beforeAll(async () => {
  stack = await prepareProcessStack(processes, {
    name: 'ledger',
    env: {
      ZEKT_INSTALLATION_DISPATCH_RATE: '0',
      ZEKT_DISPATCH_TIMEOUT_MS: '400',
      ZEKT_LEASE_MS: '1500',
      ZEKT_POLL_INTERVAL_MS: '100',
      // Long enough that no delivery runs out of attempts; short waits, so the ledger closes soon.
      ZEKT_RETRY_SCHEDULE: ['0s', ...Array.from({ length: 40 }, (_, i) => `${100 + 25 * i}ms`)].join(','),
      LOG_LEVEL: 'warn',
    },
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

interface SimDelivery {
  guid: string;
  event: string;
  hookType: string;
  repository: string | null;
  status: number | null;
  payload: { workflow_run?: { id?: number } };
}

describe('the crash ledger', () => {
  it(`loses none of ${EVENTS} acknowledged durable runs through ${KILLS} SIGKILLs and dispatch faults`, {
    timeout: Math.max(120_000, EVENTS * 400),
  }, async () => {
    const { sim, zektUrl, zektEnv } = stack;
    const random = seededRandom(SEED);
    let server = await processes.startZekt(zektUrl, zektEnv);
    await setUpRemoteWorld({ processes, sim, zektUrl, zektEnv, workflow: 'deploy.yml', durable: true });
    const ok = { kind: 'latency', delayMs: 5 };
    const faults = await json('POST', `${sim.url}/_sim/faults`, {
      method: 'POST',
      path: '/repos/globex/app/dispatches',
      repeat: true,
      faults: [
        { kind: 'status', status: 503 },
        ok,
        { kind: 'retry_after', status: 429, retryAfterSeconds: 1 },
        ok,
        { kind: 'hang' },
        ok,
        { kind: 'reset' },
        ok,
        ok,
        ok,
      ],
    });
    expect(faults.status).toBe(201);

    // Kill moments: after these many runs were sent, spread over the stream at random.
    const killAt = Array.from({ length: KILLS }, (_, i) =>
      Math.floor(((i + 0.25 + random() * 0.5) * EVENTS) / (KILLS + 1)),
    );
    let sent = 0;
    const runIds: number[] = [];
    let kills = 0;
    // Kills happen one after another (a restart must be over before the next kill), while the
    // senders go on: webhooks sent meanwhile find no server and are redelivered below.
    let killing: Promise<void> = Promise.resolve();
    const sender = async () => {
      while (sent < EVENTS) {
        sent++;
        if (killAt.includes(sent)) {
          killing = killing.then(async () => {
            kills++;
            await processes.kill(server);
            server = await processes.startZekt(zektUrl, zektEnv);
          });
        }
        const run = await json('POST', `${sim.url}/_sim/repos/acme/api/runs`, { workflow: 'deploy.yml' });
        expect(run.status).toBe(201);
        runIds.push(run.body.run.id as number);
      }
    };
    await Promise.all(Array.from({ length: SENDERS }, sender));
    await killing;
    expect(kills).toBe(KILLS);

    // Redeliver every provider webhook Zekt did not acknowledge (it was down, or died answering).
    const acknowledged = new Set<number>();
    await eventually(async () => {
      const deliveries = (await json('GET', `${sim.url}/_sim/webhook-deliveries`)).body as SimDelivery[];
      const byGuid = new Map<string, SimDelivery[]>();
      for (const d of deliveries) {
        if (d.event !== 'workflow_run' || d.hookType !== 'repository' || d.repository !== 'acme/api')
          continue;
        byGuid.set(d.guid, [...(byGuid.get(d.guid) ?? []), d]);
      }
      const refused: string[] = [];
      for (const [guid, attempts] of byGuid) {
        const answered = attempts.find((a) => a.status !== null && a.status >= 200 && a.status < 300);
        if (answered) acknowledged.add(answered.payload.workflow_run!.id!);
        else refused.push(guid);
      }
      for (const guid of refused) await json('POST', `${sim.url}/_sim/webhook-deliveries/${guid}/redeliver`);
      return refused.length === 0 ? true : undefined;
    }, 60_000);
    expect([...acknowledged].sort()).toEqual([...runIds].sort());

    // Every acknowledged run reaches the consumer at least once.
    const dispatched = await eventually(
      async () => {
        const list = (await json('GET', `${sim.url}/_sim/dispatches?repository=globex/app`)).body as Array<{
          clientPayload: { zekt: { correlationId: string } };
        }>;
        const counts = new Map<string, number>();
        for (const d of list) {
          const id = d.clientPayload.zekt.correlationId;
          counts.set(id, (counts.get(id) ?? 0) + 1);
        }
        return [...acknowledged].every((id) => counts.has(String(id))) ? counts : undefined;
      },
      Math.max(60_000, EVENTS * 100),
    );
    const duplicates = [...dispatched.values()].reduce((sum, n) => sum + n - 1, 0);
    expect(dispatched.size).toBe(acknowledged.size);
    expect(duplicates).toBeLessThanOrEqual(kills * DISPATCH_BATCH);
    if (process.env.ZEKT_LEDGER_EVENTS) {
      console.info(`ledger: ${acknowledged.size} runs, ${kills} kills, ${duplicates} repeated dispatches`);
    }
  });
});
