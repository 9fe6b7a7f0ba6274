import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { environmentForSimulator } from '../../src/cli/simulator-environment.js';
import { eventually, freePort } from '../support/harness.js';
import { json, ProcessGroup, type SimProcessInfo } from '../support/processes.js';
import { setUpRemoteWorld } from '../support/remote-world.js';
import { createTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { createTestDatabase } from '../support/test-database.js';

/**
 * Scale-out: 2 API and 2 worker processes on one PostgreSQL, behind a round-robin TCP
 * balancer; 2,000 completed runs for a durable subscription; one worker is killed with SIGKILL in
 * the middle. Every delivery is dispatched, none is lost, and none twice except the ones the
 * killed worker held a lease on when it died (its call may or may not have reached GitHub).
 */
const EVENTS = 2_000;
const processes = new ProcessGroup();
let dataDir: string;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let balancer: TcpProxy;
let sim: SimProcessInfo;
let baseUrl: string;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'zekt-scale-'));
  database = await createTestDatabase();
  sim = await processes.startSimulator();
  const [api1, api2] = [await freePort(), await freePort()];
  balancer = await createTcpProxy([
    { host: '127.0.0.1', port: api1 },
    { host: '127.0.0.1', port: api2 },
  ]);
  baseUrl = `http://127.0.0.1:${balancer.port}`;
  env = {
    ...(environmentForSimulator(sim, {
      port: api1,
      dataDir,
      nodeEnv: 'test',
      databaseUrl: database.url,
    }) as Record<string, string>),
    ZEKT_BASE_URL: baseUrl,
    ZEKT_INSTALLATION_DISPATCH_RATE: '0',
    ZEKT_DISPATCH_TIMEOUT_MS: '2000',
    ZEKT_LEASE_MS: '3000',
    ZEKT_POLL_INTERVAL_MS: '500',
  };
  // Every process shares the store and the secret; only ports and worker ids differ.
  await processes.startZekt(`http://127.0.0.1:${api1}`, { ...env, PORT: String(api1) }, ['--role', 'api']);
  await processes.startZekt(`http://127.0.0.1:${api2}`, { ...env, PORT: String(api2) }, ['--role', 'api']);
  expect(
    (await json('PUT', `${sim.url}/_sim/app/webhook`, { url: `${baseUrl}/webhooks/github` })).status,
  ).toBe(200);
  await setUpRemoteWorld({
    processes,
    sim,
    zektUrl: baseUrl,
    zektEnv: env,
    workflow: 'deploy.yml',
    durable: true,
  });
}, 120_000);

afterAll(async () => {
  await processes.stopAll();
  await balancer?.close();
  await database?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('scale-out on PostgreSQL', () => {
  it('dispatches 2,000 durable deliveries exactly once across workers, through a SIGKILL', {
    timeout: 240_000,
  }, async () => {
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      // GitHub takes a while to answer each dispatch, so work is in flight when a worker dies.
      await json('POST', `${sim.url}/_sim/faults`, {
        method: 'POST',
        path: '/repos/globex/app/dispatches',
        faults: [{ kind: 'latency', delayMs: 40 }],
        repeat: true,
      });
      await processes.startWorker({ ...env, ZEKT_WORKER_ID: 'worker-1' });
      const doomed = await processes.startWorker({ ...env, ZEKT_WORKER_ID: 'worker-2' });

      let sent = 0;
      const acknowledged: number[] = [];
      const sender = async () => {
        while (sent < EVENTS) {
          sent++;
          const run = await json('POST', `${sim.url}/_sim/repos/acme/api/runs`, { workflow: 'deploy.yml' });
          acknowledged.push(run.body.webhooks[0].status);
        }
      };
      const sending = Promise.all(Array.from({ length: 12 }, sender));

      // Kill worker-2 once it has done a share of the work and holds leases. For the kill, GitHub
      // answers slowly, so the worker is in the middle of calls (holding their leases) when it dies.
      const leasesOf = async (owner: string) =>
        new Set<string>(
          (
            await db.query(
              'select delivery_id from deliveries where lease_owner = $1 and dispatch_state = $2',
              [owner, 'pending'],
            )
          ).rows.map((r: { delivery_id: string }) => r.delivery_id),
        );
      await eventually(async () => {
        const { rows } = await db.query(
          "select count(*)::int as n from deliveries where dispatch_state = 'accepted' and lease_owner is null",
        );
        return rows[0].n >= 300 && (await leasesOf('worker-2')).size > 0 ? true : undefined;
      }, 120_000);
      const latency = async (delayMs: number) => {
        await json('DELETE', `${sim.url}/_sim/faults`);
        await json('POST', `${sim.url}/_sim/faults`, {
          method: 'POST',
          path: '/repos/globex/app/dispatches',
          faults: [{ kind: 'latency', delayMs }],
          repeat: true,
        });
      };
      await latency(400);
      // A lease held across 100 ms is one of a call GitHub answers in 400 ms, so it is still held
      // when the kill lands; a lease of a 40 ms call from before the switch may be gone by then
      // (seen once in .ci/run: worker-2 died holding nothing).
      await eventually(async () => {
        const first = await leasesOf('worker-2');
        if (first.size === 0) return undefined;
        await new Promise((resolve) => setTimeout(resolve, 100));
        const second = await leasesOf('worker-2');
        return [...first].some((id) => second.has(id)) ? true : undefined;
      }, 30_000);
      await processes.kill(doomed);
      const killedAt = new Date();
      // What it held at once: on a loaded machine the wait below can outlast a lease it took just
      // before, and worker-1 takes that lease over before the second read.
      const orphaned = await leasesOf('worker-2');
      // A statement the worker sent before it died (a claim is one autocommitted UPDATE) may still
      // be running in the server and commit after this: wait until every statement older than the
      // kill has ended, so the leases read next add those a claim in flight took.
      await eventually(async () => {
        const { rows } = await db.query(
          "select count(*)::int as n from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and state = 'active' and pid <> pg_backend_pid() and query_start < $1",
          [killedAt],
        );
        return rows[0].n === 0 ? true : undefined;
      }, 30_000);
      for (const id of await leasesOf('worker-2')) orphaned.add(id);
      await latency(40);
      expect(orphaned.size).toBeGreaterThan(0);

      await sending;
      expect(acknowledged).toHaveLength(EVENTS);
      expect(acknowledged.every((status) => status === 202)).toBe(true);

      await eventually(async () => {
        const { rows } = await db.query(
          "select count(*)::int as n from deliveries where dispatch_state = 'accepted'",
        );
        return rows[0].n === EVENTS ? true : undefined;
      }, 180_000);

      const deliveries = (await db.query('select delivery_id, attempt_count from deliveries')).rows as Array<{
        delivery_id: string;
        attempt_count: number;
      }>;
      expect(deliveries).toHaveLength(EVENTS);
      const events = await db.query("select count(*)::int as n from events where route_status = 'routed'");
      expect(events.rows[0].n).toBe(EVENTS);

      const dispatches = (await json('GET', `${sim.url}/_sim/dispatches?repository=globex/app`))
        .body as Array<{
        clientPayload: { zekt: { deliveryId: string } };
      }>;
      const seen = new Map<string, number>();
      for (const d of dispatches)
        seen.set(d.clientPayload.zekt.deliveryId, (seen.get(d.clientPayload.zekt.deliveryId) ?? 0) + 1);
      // None lost: every delivery reached GitHub.
      expect(deliveries.filter((d) => !seen.has(d.delivery_id))).toEqual([]);
      // None twice, except where a lease expired because its worker died mid-call.
      const twice = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
      expect(twice.filter((id) => !orphaned.has(id))).toEqual([]);
      expect(Math.max(...seen.values())).toBeLessThanOrEqual(2);
      // Taken over deliveries were claimed twice; all others once.
      expect(deliveries.filter((d) => d.attempt_count !== 1 && !orphaned.has(d.delivery_id))).toEqual([]);
      // Every delivery has its attempt on record (worker-2 held leases before it died, above).
      const attempts = await db.query('select count(*)::int as n from delivery_attempts');
      expect(attempts.rows[0].n).toBeGreaterThanOrEqual(EVENTS);
    } finally {
      await db.end();
    }
  });
});
