import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../src/test-support/harness.js';
import { type ProcessStack, prepareProcessStack } from '../src/test-support/process-stack.js';
import { json, ProcessGroup, type SimProcessInfo } from '../src/test-support/processes.js';
import { type Exposition, parsePrometheusText, sampleValue } from '../src/test-support/prometheus-text.js';
import { type RemoteWorld, setUpRemoteWorld } from '../src/test-support/remote-world.js';
import { TEST_STORE } from '../src/test-support/test-database.js';

/**
 * Metrics and probes on every process (issue 12 §1), as deployed: the built `zekt serve` and the
 * simulator as separate processes. On PostgreSQL an api process and a worker-only process share
 * the store (the worker is scraped and probed on its own port); on SQLite one process runs every
 * role. Real runs go through the simulator and the counters are read from scrapes before and after.
 */
const TOKEN = 'metrics-token-for-tests-0123456789';
const RUNS = 4;
const processes = new ProcessGroup();
let stack: ProcessStack;
let sim: SimProcessInfo;
let zektUrl: string;
let zektEnv: Record<string, string>;
/** Where the dispatcher runs: the worker's probe port on PostgreSQL, the one process on SQLite. */
let workerUrl: string;
let world: RemoteWorld;

beforeAll(async () => {
  stack = await prepareProcessStack(processes, {
    name: 'metrics',
    // Pacing on, fast enough for a test: its delays are measured too.
    env: { ZEKT_METRICS_TOKEN: TOKEN, ZEKT_INSTALLATION_DISPATCH_RATE: '600', ZEKT_POLL_INTERVAL_MS: '200' },
  });
  ({ sim, zektUrl, zektEnv } = stack);
  if (TEST_STORE === 'postgres') {
    await processes.startZekt(zektUrl, zektEnv, ['--role', 'api']);
    ({ url: workerUrl } = await processes.startProbedWorker(zektEnv));
  } else {
    await processes.startZekt(zektUrl, zektEnv);
    workerUrl = zektUrl;
  }
  world = await setUpRemoteWorld({ processes, sim, zektUrl, zektEnv, workflow: 'deploy.yml' });
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

async function scrape(url: string): Promise<Exposition> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await response.text());
}

describe('metrics and probes on every process', () => {
  it('counts webhooks, messages, dispatch attempts and end-to-end latency under real load', {
    timeout: 60_000,
  }, async () => {
    const apiBefore = await scrape(zektUrl);
    const workerBefore = await scrape(workerUrl);

    for (let i = 0; i < RUNS; i++) {
      const run = await json('POST', `${sim.url}/_sim/repos/acme/api/runs`, {
        workflow: 'deploy.yml',
        message: { zektUrl, eventType: 'tests-passed', payload: { run: i } },
      });
      expect(run.status).toBe(201);
      expect(run.body.message.status).toBe(201);
    }
    // A webhook signed with the wrong secret.
    const forged = await fetch(`${zektUrl}/webhooks/github`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'ping',
        'x-github-delivery': 'forged-1',
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
      },
      body: '{}',
    });
    expect(forged.status).toBe(401);

    await eventually(async () => {
      const list = (await json('GET', `${sim.url}/_sim/dispatches?repository=globex/app`)).body as unknown[];
      return list.length >= RUNS ? true : undefined;
    }, 30_000);

    // The queue gauges are cached for a few seconds: wait for a reading taken after the dispatches.
    const workerAfter = await eventually(async () => {
      const exposition = await scrape(workerUrl);
      return sampleValue(exposition, 'zekt_deliveries', { state: 'accepted' }) === RUNS
        ? exposition
        : undefined;
    }, 20_000);
    const apiAfter = await scrape(zektUrl);
    const moved = (
      after: Exposition,
      before: Exposition,
      name: string,
      labels: Record<string, string> = {},
    ) => sampleValue(after, name, labels) - sampleValue(before, name, labels);

    // Ingestion, on the process that answers the API.
    expect(moved(apiAfter, apiBefore, 'zekt_webhooks_received_total', { outcome: 'accepted' })).toBe(RUNS);
    expect(moved(apiAfter, apiBefore, 'zekt_webhooks_received_total', { outcome: 'bad_signature' })).toBe(1);
    expect(
      moved(apiAfter, apiBefore, 'zekt_ingest_latency_seconds_count', { endpoint: 'webhook' }),
    ).toBeGreaterThanOrEqual(RUNS + 1);
    expect(moved(apiAfter, apiBefore, 'zekt_ingest_latency_seconds_count', { endpoint: 'message' })).toBe(
      RUNS,
    );
    expect(sampleValue(apiAfter, 'zekt_ingest_latency_seconds_sum', { endpoint: 'webhook' })).toBeGreaterThan(
      0,
    );
    expect(apiAfter.types.get('zekt_ingest_latency_seconds')).toBe('histogram');

    // Dispatch, on the process that runs the workers.
    expect(
      moved(workerAfter, workerBefore, 'zekt_dispatch_attempts_total', {
        result: 'accepted',
        category: 'none',
      }),
    ).toBe(RUNS);
    expect(moved(workerAfter, workerBefore, 'zekt_end_to_end_latency_seconds_count')).toBe(RUNS);
    expect(moved(workerAfter, workerBefore, 'zekt_pacing_delay_seconds_count')).toBeGreaterThanOrEqual(RUNS);
    // Pacing put deliveries back without an attempt: no gap in their numbers, no lease lost.
    expect(moved(workerAfter, workerBefore, 'zekt_lost_leases_total', { kind: 'reclaimed' })).toBe(0);
    expect(moved(workerAfter, workerBefore, 'zekt_lost_leases_total', { kind: 'taken_over' })).toBe(0);
    expect(sampleValue(workerAfter, 'zekt_deliveries', { state: 'pending' })).toBe(0);
    expect(sampleValue(workerAfter, 'zekt_deliveries', { state: 'failed' })).toBe(0);
    expect(sampleValue(workerAfter, 'zekt_queue_depth')).toBe(0);
    expect(sampleValue(workerAfter, 'zekt_queue_oldest_due_age_seconds')).toBe(0);
    expect(workerAfter.types.get('zekt_dispatch_attempts_total')).toBe('counter');
    // Every process reports its own runtime too.
    expect(sampleValue(workerAfter, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);

    if (TEST_STORE === 'postgres') {
      // Each process counts what it did: the api process dispatched nothing, the worker received nothing.
      expect(
        moved(apiAfter, apiBefore, 'zekt_dispatch_attempts_total', { result: 'accepted', category: 'none' }),
      ).toBe(0);
      expect(moved(workerAfter, workerBefore, 'zekt_webhooks_received_total', { outcome: 'accepted' })).toBe(
        0,
      );
      // Both read the same store for the queue gauges.
      expect(sampleValue(apiAfter, 'zekt_deliveries', { state: 'accepted' })).toBeLessThanOrEqual(RUNS);
    }

    // Nothing that names a tenant or a secret.
    for (const text of [
      await (await fetchMetrics(zektUrl, TOKEN)).text(),
      await (await fetchMetrics(workerUrl, TOKEN)).text(),
    ]) {
      for (const word of [
        'acme',
        'globex',
        'alice',
        'bob',
        TOKEN,
        zektEnv.ZEKT_SECRET!,
        zektEnv.GITHUB_WEBHOOK_SECRET!,
      ]) {
        expect(text).not.toContain(word);
      }
    }
    expect(world.subscriptionId).toBeTruthy();
  });

  it("answers the worker's probes on its own port", async () => {
    expect(await (await fetch(`${workerUrl}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${workerUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
    if (TEST_STORE === 'postgres') {
      // Probes and metrics only: the worker serves no API.
      const api = await fetch(`${workerUrl}/api/v1/me`);
      expect(api.status).toBe(404);
      expect(api.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await api.json()) as { code: string }).code).toBe('route_not_found');
      expect(workerUrl).not.toBe(zektUrl);
    }
  });

  it('refuses a scrape without the metrics token, or with a wrong one, as problem+json', async () => {
    for (const url of new Set([zektUrl, workerUrl])) {
      for (const [token, code] of [
        [undefined, 'unauthenticated'],
        ['wrong-token', 'invalid_token'],
        [`${TOKEN}x`, 'invalid_token'],
      ] as const) {
        const response = await fetchMetrics(url, token);
        expect(response.status, `${url} ${token}`).toBe(401);
        expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        const problem = (await response.json()) as { code: string };
        expect(problem.code).toBe(code);
        expect(JSON.stringify(problem)).not.toContain(TOKEN);
      }
    }
  });
});

function fetchMetrics(url: string, token: string | undefined): Promise<Response> {
  return fetch(
    `${url}/metrics`,
    token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
  );
}
