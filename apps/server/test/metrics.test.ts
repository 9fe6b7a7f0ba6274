import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startHarness } from './support/harness.js';
import { type ProcessStack, prepareProcessStack } from './support/process-stack.js';
import { json, ProcessGroup, type SimProcessInfo } from './support/processes.js';
import { type Exposition, parsePrometheusText, sampleValue } from './support/prometheus-text.js';
import { type RemoteWorld, setUpRemoteWorld } from './support/remote-world.js';
import { TEST_STORE } from './support/test-database.js';

/**
 * Metrics and probes on every process, as deployed: the built `zekt serve` and the
 * simulator as separate processes. On PostgreSQL an api process and a worker-only process share
 * the store; on SQLite one process runs every role. Every process serves `/metrics` on a private
 * port of its own (loopback by default), never on the API's public port unless told to. Real runs
 * go through the simulator and the counters are read from scrapes before and after.
 */
const TOKEN = 'metrics-token-for-tests-0123456789';
const RUNS = 4;
const processes = new ProcessGroup();
let stack: ProcessStack;
let sim: SimProcessInfo;
let zektUrl: string;
let zektEnv: Record<string, string>;
/** The metrics port of the process that answers the API. */
let apiMetricsUrl: string;
/** Where the dispatcher runs: the worker's probe port on PostgreSQL, the one process's on SQLite. */
let workerUrl: string;
let worker: ChildProcess | undefined;
const WRONG_TOKENS_A_MINUTE = 5;
let world: RemoteWorld;

beforeAll(async () => {
  stack = await prepareProcessStack(processes, {
    name: 'metrics',
    // Pacing on, fast enough for a test: its delays are measured too.
    env: {
      ZEKT_METRICS_TOKEN: TOKEN,
      ZEKT_INSTALLATION_DISPATCH_RATE: '600',
      ZEKT_POLL_INTERVAL_MS: '200',
      ZEKT_AUTH_FAILURE_LIMIT: String(WRONG_TOKENS_A_MINUTE),
    },
  });
  ({ sim, zektUrl, zektEnv } = stack);
  if (TEST_STORE === 'postgres') {
    ({ metricsUrl: apiMetricsUrl } = await processes.startZektWithMetrics(zektUrl, zektEnv, [
      '--role',
      'api',
    ]));
    ({ url: workerUrl, child: worker } = await processes.startProbedWorker(zektEnv));
  } else {
    ({ metricsUrl: apiMetricsUrl } = await processes.startZektWithMetrics(zektUrl, zektEnv));
    workerUrl = apiMetricsUrl;
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
    const apiBefore = await scrape(apiMetricsUrl);
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
    const apiAfter = await scrape(apiMetricsUrl);
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
      await (await fetchMetrics(apiMetricsUrl, TOKEN)).text(),
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
      expect(workerUrl).not.toBe(apiMetricsUrl);
      // Its probe server is a Fastify of its own: started without a deprecated option, so an
      // operator's log shows no framework warning at each start.
      expect(processes.stderrOf(worker!)).not.toMatch(/FSTDEP|DeprecationWarning/);
    }
  });

  it("keeps /metrics off the API's public port, and the metrics port on loopback", async () => {
    for (const token of [undefined, TOKEN]) {
      const onApiPort = await fetchMetrics(zektUrl, token);
      expect(onApiPort.status).toBe(404);
      expect(onApiPort.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await onApiPort.json()) as { code: string }).code).toBe('route_not_found');
    }
    for (const url of [apiMetricsUrl, workerUrl]) {
      expect(new URL(url).hostname).toBe('127.0.0.1');
      expect(new URL(url).port).not.toBe(new URL(zektUrl).port);
      expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' });
    }
    // The API's own probes stay on its port, for the load balancer.
    expect((await fetch(`${zektUrl}/readyz`)).status).toBe(200);
  });

  it('refuses a scrape without the metrics token, or with a wrong one, as problem+json', async () => {
    for (const url of new Set([apiMetricsUrl, workerUrl])) {
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

  // Last: it locks this client out of /metrics until the minute ends.
  it('limits wrong metrics tokens per client: 429 before the token is compared, apart from the API', {
    timeout: 45_000,
  }, async () => {
    // Counts are per minute: start early in one, so the guesses and the checks share it.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
    // Should the minute turn anyway, its count starts again: at most twice the limit.
    let refused: Response | undefined;
    for (let guess = 0; guess <= 2 * WRONG_TOKENS_A_MINUTE + 1 && refused === undefined; guess++) {
      const answer = await fetchMetrics(apiMetricsUrl, `wrong-token-${guess}`);
      if (answer.status === 429) refused = answer;
      else expect(answer.status).toBe(401);
    }
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused!.json()) as { code: string }).code).toBe('rate_limited');
    // Counted in the store: the worker's metrics port refuses this client too, even the right token
    // (nothing is compared any more, so the limit is no oracle)…
    const right = await fetchMetrics(workerUrl, TOKEN);
    expect([right.status, ((await right.json()) as { code: string }).code]).toEqual([429, 'rate_limited']);
    // …while the API, whose failed authentications are counted apart, still answers this client.
    const me = await json('GET', `${zektUrl}/api/v1/me`, undefined, world.alice);
    expect(me.status).toBe(200);
  });
});

function fetchMetrics(url: string, token: string | undefined): Promise<Response> {
  return fetch(
    `${url}/metrics`,
    token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
  );
}

describe('metrics on the API port, when the operator asks for it', () => {
  it('serves /metrics on the public port too with ZEKT_METRICS_ON_API_PORT=true, behind the token', async () => {
    const h = await startHarness({
      env: { ZEKT_METRICS_ON_API_PORT: 'true', ZEKT_METRICS_TOKEN: TOKEN },
    });
    try {
      const open = await fetch(`${h.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(open.status).toBe(200);
      expect(parsePrometheusText(await open.text()).types.get('zekt_dispatch_attempts_total')).toBe(
        'counter',
      );
      const closed = await fetch(`${h.url}/metrics`);
      expect([closed.status, ((await closed.json()) as { code: string }).code]).toEqual([
        401,
        'unauthenticated',
      ]);
      // And on its private port, as always.
      expect((await fetchMetrics(h.zekt.metricsUrl!, TOKEN)).status).toBe(200);
    } finally {
      await h.close();
    }
  });
});
