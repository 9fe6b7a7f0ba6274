import { writeFileSync } from 'node:fs';
import type { CompareOptions as CliCompareOptions } from '@zekt/server/dist/cli/bench-workspace.js';
import { loadStoreConfig } from '@zekt/server/dist/config.js';
import { openStore } from '@zekt/server/dist/store/store.js';
import { sql } from 'kysely';
import {
  BARE_DURABLE_KEY,
  COMPARE_TARGETS,
  type CompareMeasurements,
  type CompareReport,
  DURABLE_KEY,
  DURABLE_POSTGRES_KEY,
  INGESTION_KEY,
  INGESTION_POSTGRES_KEY,
  judgeCompare,
  type TargetFigures,
} from './compare-report.js';
import { combineRounds, median } from './compare-rounds.js';
import {
  type ComparisonTarget,
  type ConsumerSpec,
  FAST_CONSUMER,
  SLOW_CONSUMER,
  startBareDurableRouter,
  startCeiling,
  startNaiveRouter,
  startZekt,
} from './comparison-targets.js';
import { cpuPerEvent, cpuSnapshot, formatCpuPerEvent } from './cpu-time.js';
import { seedDeliveryHistory } from './delivery-history.js';
import { latencyChartSvg } from './latency-chart.js';
import { summarizeLatencies } from './latency-summary.js';
import { preciseNow, runWebhookLoad, type WebhookTiming } from './webhook-load.js';

/**
 * One target under one load: how fast it answered, how fast its dispatches reached GitHub, and
 * how long each run took from the webhook leaving the sender to its dispatch arriving.
 */
export interface LoadMeasurement {
  /** Webhooks started per second (0: closed loop). */
  offeredRate: number;
  sent: number;
  acknowledged: number;
  /** Answered 2xx per second, first send → last answer. */
  ackPerSecond: number;
  /** Dispatches arrived per second, first send → last arrival (null: the target does not dispatch). */
  deliveredPerSecond: number | null;
  delivered: number;
  ack: ReturnType<typeof summarizeLatencies>;
  bodyBytes: number;
  /** Webhook sent → dispatch arrived at GitHub (the first consumer's); for the ceiling, the answer. */
  e2e: ReturnType<typeof summarizeLatencies>;
}

let nextRunId = 1_000_000;

/** Sends `count` webhooks to the target and waits (up to `settleMs`) for their dispatches. */
export async function measureLoad(
  target: ComparisonTarget,
  input: { count: number; rate: number; connections: number; settleMs: number; consumer?: string },
): Promise<LoadMeasurement> {
  const firstRunId = nextRunId;
  nextRunId += input.count;
  const load = await runWebhookLoad({
    url: target.url,
    secret: target.secret,
    headers: target.headers,
    template: target.template,
    firstRunId,
    count: input.count,
    connections: input.connections,
    rate: input.rate,
  });
  const timings = load.timings;
  const ok = timings.filter((t) => t.status >= 200 && t.status < 300);
  const firstSent = Math.min(...timings.map((t) => t.sentAt));
  const lastAnswer = Math.max(...timings.map((t) => t.answeredAt));
  const consumer = input.consumer ?? target.consumers[0];
  const arrivals = consumer === undefined ? undefined : target.arrivals.get(consumer);
  let e2eSamples: number[];
  let deliveredPerSecond: number | null = null;
  let delivered = 0;
  if (arrivals) {
    const deadline = Date.now() + input.settleMs;
    while (Date.now() < deadline && countArrived(arrivals, ok) < ok.length) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const arrived = ok
      .map((t) => ({ t, at: arrivals.get(t.runId) }))
      .filter((x): x is { t: WebhookTiming; at: number } => x.at !== undefined);
    delivered = arrived.length;
    e2eSamples = arrived.map((x) => x.at - x.t.sentAt);
    const lastArrival = Math.max(...arrived.map((x) => x.at));
    deliveredPerSecond = delivered > 0 ? round((delivered * 1000) / (lastArrival - firstSent)) : 0;
  } else {
    e2eSamples = ok.map((t) => t.answeredAt - t.sentAt);
  }
  return {
    offeredRate: input.rate,
    sent: timings.length,
    acknowledged: ok.length,
    ackPerSecond: round((ok.length * 1000) / (lastAnswer - firstSent)),
    deliveredPerSecond,
    delivered,
    ack: summarizeLatencies(ok.map((t) => round(t.answeredAt - t.sentAt))),
    bodyBytes: load.bodyBytes,
    e2e: summarizeLatencies(e2eSamples.map(round)),
  };
}

function countArrived(arrivals: Map<number, number>, timings: WebhookTiming[]): number {
  let n = 0;
  for (const t of timings) if (arrivals.has(t.runId)) n++;
  return n;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

/** The CLI's description of a comparison, with the parts to run named as this workspace knows them. */
export interface CompareOptions extends Omit<CliCompareOptions, 'only'> {
  /** Run only these parts (COMPARE_PARTS; undefined: all of them). */
  only?: readonly ComparePart[] | undefined;
}

const COMPARE_RATE = COMPARE_TARGETS.e2eP99AtRate.rate;
const INGESTION_NAME = 'Zekt, ingestion alone (SQLite, --role api)';
const INGESTION_POSTGRES_NAME = 'Zekt, ingestion alone (PostgreSQL, --role api)';

/**
 * The parts of the comparison, for `--only`: each target, and each scenario. On a shared machine one
 * scenario at a time is what can be re-run after a change; a partial run's ratios to targets it
 * did not run print as not measured.
 */
export const COMPARE_PARTS = [
  'ceiling',
  'naive',
  'bare-durable',
  'nondurable',
  'durable',
  'ingestion',
  'postgres',
  'isolation',
  'backlog',
  'scale-out',
  'queries',
] as const;
export type ComparePart = (typeof COMPARE_PARTS)[number];

/**
 * Warms a target up (JIT, connections, installation tokens, the store's pages), then measures it.
 * Every target's first 3,000 webhooks after 300 were a quarter to a third slower than the next (the
 * ceiling's and the naive router's too): the warm-up is what makes the figures its steady state.
 */
async function measureTarget(
  key: string,
  target: ComparisonTarget,
  options: CompareOptions,
  round: string,
): Promise<{ figures: TargetFigures; bodyBytes: number }> {
  const { progress } = options;
  progress(`${target.name}${round}: warming up (${options.warmUp} webhooks)`);
  if (options.warmUp > 0)
    await measureLoad(target, {
      count: options.warmUp,
      rate: 0,
      connections: options.connections,
      settleMs: 120_000,
    });
  progress(`  ${options.events} webhooks, ${options.connections} connections, closed loop`);
  const cpuBefore = cpuSnapshot(target.pids());
  const throughput = await measureLoad(target, {
    count: options.events,
    rate: 0,
    connections: options.connections,
    settleMs: 120_000,
  });
  const cpu = cpuPerEvent(cpuBefore, cpuSnapshot(target.pids()), throughput.sent);
  progress(
    `  acknowledged ${throughput.ackPerSecond}/s, delivered ${throughput.deliveredPerSecond ?? '—'}/s${cpu ? `; CPU per webhook: ${formatCpuPerEvent(cpu)}` : ''}`,
  );
  const latency: TargetFigures['latency'] = [];
  for (const rate of options.rates) {
    const m = await measureLoad(target, {
      count: Math.max(200, Math.round(rate * 4)),
      rate,
      connections: options.connections,
      settleMs: 60_000,
    });
    progress(`  ${rate}/s offered: e2e p50 ${m.e2e.p50} ms, p99 ${m.e2e.p99} ms`);
    latency.push({ offeredRate: rate, e2e: m.e2e, ack: m.ack });
  }
  return {
    figures: {
      key,
      name: target.name,
      ackPerSecond: throughput.ackPerSecond,
      deliveredPerSecond: throughput.deliveredPerSecond,
      lost: target.consumers.length > 0 ? throughput.acknowledged - throughput.delivered : 0,
      latency,
      peakRssBytes: target.peakRssBytes(),
      cpuPerEvent: cpu,
    },
    bodyBytes: throughput.bodyBytes,
  };
}

async function withTarget<T, X extends ComparisonTarget>(
  start: () => Promise<X>,
  use: (target: X) => Promise<T>,
): Promise<T> {
  const target = await start();
  try {
    return await use(target);
  } finally {
    await target.stop();
  }
}

/** A target of the side-by-side comparison: how to start it, and the rates it is timed at. */
interface ComparedTarget {
  key: string;
  start: () => Promise<ComparisonTarget>;
  rates: number[];
}

/**
 * `zekt bench --compare`: the ceiling, the naive router and Zekt in the shapes its targets name, in
 * turn, `rounds` times over (compare-rounds.ts says why), each round in fresh processes; then the
 * isolation, backlog, scale-out and query scenarios.
 */
export async function runCompare(options: CompareOptions): Promise<CompareReport> {
  const { progress } = options;
  const rates = options.rates.includes(COMPARE_RATE)
    ? options.rates
    : [...options.rates, COMPARE_RATE].sort((a, b) => a - b);
  const runs = (part: ComparePart) => options.only === undefined || options.only.includes(part);
  const profiled = options.profileDir
    ? { execArgv: ['--cpu-prof', '--cpu-prof-dir', options.profileDir] }
    : {};
  // The naive router calls GitHub with as many requests in flight as webhooks arrive; Zekt gets the
  // same toward the one consumer's installation (its default cap, 8, protects tenants from each
  // other, which the isolation scenario measures with the default). Pacing is off for the same
  // reason (allowed for benchmarks).
  const sameConcurrency = { env: { ZEKT_INSTALLATION_CONCURRENCY: String(options.connections) } };
  const compared: ComparedTarget[] = [];
  if (runs('ceiling')) compared.push({ key: 'ceiling', start: startCeiling, rates });
  if (runs('naive')) compared.push({ key: 'naive', start: () => startNaiveRouter([FAST_CONSUMER]), rates });
  if (runs('bare-durable'))
    compared.push({ key: BARE_DURABLE_KEY, start: () => startBareDurableRouter([FAST_CONSUMER]), rates });
  const zekt = (key: string, name: string, durable: boolean, databaseUrl?: string): ComparedTarget => ({
    key,
    start: () =>
      startZekt({
        name,
        consumers: [FAST_CONSUMER],
        durable,
        ...(databaseUrl ? { databaseUrl } : {}),
        ...sameConcurrency,
        ...profiled,
      }),
    rates,
  });
  if (runs('nondurable')) compared.push(zekt('zekt-nondurable-sqlite', 'Zekt, non-durable (SQLite)', false));
  if (runs('durable')) compared.push(zekt(DURABLE_KEY, 'Zekt, durable (SQLite)', true));
  // The API process of a split deployment (`--role api`): it verifies each webhook and stores its
  // event durably, and leaves routing and dispatch to workers, of which there are none here: what
  // the durable acknowledgement costs without the router and the dispatcher on the same CPU.
  const ingestion = (key: string, name: string, databaseUrl?: string): ComparedTarget => ({
    key,
    start: async () => {
      const started = await startZekt({
        name,
        consumers: [FAST_CONSUMER],
        durable: true,
        role: 'api',
        ...(databaseUrl ? { databaseUrl } : {}),
        ...profiled,
      });
      return { ...started, consumers: [] };
    },
    rates: [],
  });
  if (runs('ingestion')) {
    compared.push(ingestion(INGESTION_KEY, INGESTION_NAME));
    if (options.databaseUrl)
      compared.push(ingestion(INGESTION_POSTGRES_KEY, INGESTION_POSTGRES_NAME, options.databaseUrl));
  }
  if (options.databaseUrl && runs('postgres'))
    compared.push(zekt(DURABLE_POSTGRES_KEY, 'Zekt, durable (PostgreSQL)', true, options.databaseUrl));
  const rounds: TargetFigures[][] = compared.map(() => []);
  let bodyBytes = 0;
  for (let round = 1; round <= options.rounds; round++) {
    const label = options.rounds > 1 ? ` (round ${round} of ${options.rounds})` : '';
    for (const [i, target] of compared.entries()) {
      const measured = await withTarget(target.start, (t) =>
        measureTarget(target.key, t, { ...options, rates: target.rates }, label),
      );
      rounds[i]?.push(measured.figures);
      bodyBytes ||= measured.bodyBytes;
    }
  }
  const figures = rounds.map(combineRounds);
  const isolation = runs('isolation') ? await measureIsolation(options) : null;
  let backlog: CompareMeasurements['backlog'] = null;
  if (runs('backlog')) {
    backlog = [await measureBacklog(options, { label: 'SQLite', databaseUrl: undefined })];
    if (options.databaseUrl)
      backlog.push(await measureBacklog(options, { label: 'PostgreSQL', databaseUrl: options.databaseUrl }));
  }
  const scaling =
    options.databaseUrl && runs('scale-out') ? await measureScaling(options.databaseUrl, options) : null;
  let queries: CompareMeasurements['queries'] = null;
  if (options.records > 0 && runs('queries')) {
    // On each store: the access paths differ, and so do their plans.
    const stores = [
      { label: 'SQLite', databaseUrl: undefined },
      ...(options.databaseUrl ? [{ label: 'PostgreSQL', databaseUrl: options.databaseUrl }] : []),
    ];
    const results = [];
    for (const store of stores) {
      const measured = await measureQueries(options, store);
      results.push(...measured.results);
    }
    queries = { records: options.records, results };
  }
  const report = judgeCompare({
    events: options.events,
    rounds: options.rounds,
    warmUp: options.warmUp,
    connections: options.connections,
    bodyBytes,
    targets: figures,
    isolation,
    backlog,
    scaling,
    queries,
  });
  if (options.chartPath) {
    writeFileSync(
      options.chartPath,
      latencyChartSvg(
        report.targets
          .filter((t) => t.latency.length > 0)
          .map((t) => ({
            name: t.name,
            points: t.latency.map((p) => ({ rate: p.offeredRate, p99: p.e2e.p99 })),
          })),
        'p99 webhook sent → dispatch at GitHub (ceiling: answered), against offered rate',
      ),
    );
    progress(`chart written to ${options.chartPath}`);
  }
  return report;
}

const SLOW_MS = 8_000;

/** Two consumers of one service; one consumer's GitHub answers in 8 s. */
async function measureIsolation(options: CompareOptions): Promise<CompareMeasurements['isolation']> {
  const { progress } = options;
  return withTarget(
    () =>
      startZekt({
        name: 'Zekt, durable (SQLite), two consumers',
        consumers: [FAST_CONSUMER, SLOW_CONSUMER],
        durable: true,
      }),
    async (target) => {
      progress(`isolation: warming up`);
      await measureLoad(target, { count: 100, rate: 0, connections: options.connections, settleMs: 60_000 });
      target.sim?.injectFaults({
        method: 'POST',
        path: `/repos/${SLOW_CONSUMER.account}/${SLOW_CONSUMER.repo}/dispatches`,
        faults: [{ kind: 'latency', delayMs: SLOW_MS }],
        repeat: true,
      });
      const slow = `${SLOW_CONSUMER.account}/${SLOW_CONSUMER.repo}`;
      const slowBefore = target.arrivals.get(slow)?.size ?? 0;
      const rate = 100;
      const events = 1_000;
      progress(`isolation: ${events} events at ${rate}/s, ${slow}'s GitHub answering in ${SLOW_MS / 1000} s`);
      const m = await measureLoad(target, {
        count: events,
        rate,
        connections: options.connections,
        settleMs: 30_000,
      });
      const slowDelivered = (target.arrivals.get(slow)?.size ?? 0) - slowBefore;
      progress(`  the other consumer: p50 ${m.e2e.p50} ms, p99 ${m.e2e.p99} ms (${m.delivered} delivered)`);
      return { slowMs: SLOW_MS, offeredRate: rate, events, fast: m.e2e, slowDelivered };
    },
  );
}

/** The target's GitHub answers every `repository_dispatch` after `delayMs`, from now on. */
function slowDispatches(target: ComparisonTarget, delayMs: number): void {
  target.sim?.injectFaults({
    method: 'POST',
    path: '/repos/*/*/dispatches',
    faults: [{ kind: 'latency', delayMs }],
    repeat: true,
  });
}

const BACKLOG_EVENTS = 6_000;
const BACKLOG_GITHUB_MS = 100;

/**
 * Peak RSS with a backlog: durable Zekt takes webhooks as fast as they come while GitHub answers
 * each dispatch in 100 ms, so routed but undelivered deliveries pile up (thousands at the peak),
 * then drain. What the process holds must not grow with what waits in the store.
 */
async function measureBacklog(
  options: CompareOptions,
  on: { label: string; databaseUrl: string | undefined },
): Promise<NonNullable<CompareMeasurements['backlog']>[number]> {
  const { progress } = options;
  return withTarget(
    () =>
      startZekt({
        name: `Zekt, durable (${on.label}), with a backlog`,
        consumers: [FAST_CONSUMER],
        durable: true,
        ...(on.databaseUrl ? { databaseUrl: on.databaseUrl } : {}),
        env: { ZEKT_INSTALLATION_CONCURRENCY: String(options.connections) },
      }),
    async (target) => {
      slowDispatches(target, BACKLOG_GITHUB_MS);
      progress(
        `backlog (${on.label}): ${BACKLOG_EVENTS} webhooks, closed loop, GitHub answering in ${BACKLOG_GITHUB_MS} ms`,
      );
      const m = await measureLoad(target, {
        count: BACKLOG_EVENTS,
        rate: 0,
        connections: options.connections,
        settleMs: 180_000,
      });
      // Deliveries still waiting when the last webhook was answered: ingest ran ahead of GitHub.
      const ingestSeconds = m.acknowledged / m.ackPerSecond;
      const deliveredMeanwhile = Math.round(
        Math.min(m.delivered, (m.deliveredPerSecond ?? 0) * ingestSeconds),
      );
      const figures = {
        store: on.label,
        events: BACKLOG_EVENTS,
        githubLatencyMs: BACKLOG_GITHUB_MS,
        backlogAtLastAck: m.acknowledged - deliveredMeanwhile,
        lost: m.acknowledged - m.delivered,
        peakRssBytes: target.peakRssBytes(),
      };
      progress(
        `  about ${figures.backlogAtLastAck} deliveries waiting when the last webhook was answered; ${m.delivered} of ${m.acknowledged} delivered; peak RSS ${Math.round((figures.peakRssBytes ?? 0) / 1024 / 1024)} MB`,
      );
      return figures;
    },
  );
}

const SCALING_CONSUMERS: ConsumerSpec[] = Array.from({ length: 8 }, (_, i) => ({
  account: `consumer${i + 1}`,
  repo: 'app',
  user: `user${i + 1}`,
}));
const SCALING_GITHUB_MS = 250;

/**
 * A backlog stored by the API process (its workers not started yet), then drained by 1 or 2 worker
 * processes while GitHub takes 250 ms per dispatch: how much more a second worker delivers. One
 * drain of each per round; the verdict is on the medians.
 */
async function measureScaling(
  databaseUrl: string,
  options: CompareOptions,
): Promise<CompareMeasurements['scaling']> {
  const { progress } = options;
  const events = 400;
  const drain = async (workers: number) =>
    withTarget(
      () =>
        startZekt({
          name: `Zekt on PostgreSQL, ${workers} worker(s)`,
          consumers: SCALING_CONSUMERS,
          durable: true,
          databaseUrl,
          role: 'api',
        }),
      async (target) => {
        slowDispatches(target, SCALING_GITHUB_MS);
        const load = await runWebhookLoad({
          url: target.url,
          secret: target.secret,
          headers: target.headers,
          template: target.template,
          firstRunId: nextRunId,
          count: events,
          connections: options.connections,
          rate: 0,
        });
        nextRunId += events;
        const acknowledged = load.timings.filter((t) => t.status >= 200 && t.status < 300).length;
        const expected = acknowledged * SCALING_CONSUMERS.length;
        const started = preciseNow();
        await target.addWorkers(workers);
        const arrived = () => [...target.arrivals.values()].reduce((n, m) => n + m.size, 0);
        const deadline = Date.now() + 180_000;
        while (arrived() < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        const times = [...target.arrivals.values()].flatMap((m) => [...m.values()]);
        const first = Math.min(...times);
        const last = Math.max(...times);
        // The drain's rate from its first dispatch to its last: the workers' start-up (a Node
        // process, its store and GitHub App set-up, ~1 s each on this machine) is not throughput,
        // and it weighed on the 2-worker run's shorter drain twice as much as on the 1-worker run's.
        const perSecond = Math.round(((times.length - 1) * 1000 * 10) / (last - first)) / 10;
        progress(
          `scale-out: ${workers} worker(s) delivered ${arrived()} of ${expected} at ${perSecond}/s (first dispatch ${Math.round(first - started)} ms after the workers were started)`,
        );
        return { perSecond, deliveries: expected, startupMs: Math.round(first - started) };
      },
    );
  // In rounds, as the targets are (compare-rounds.ts): one drain of each took the drift of its
  // minutes as the verdict.
  const rounds: Array<{ oneWorkerPerSecond: number; twoWorkersPerSecond: number }> = [];
  let deliveries = 0;
  for (let round = 0; round < options.rounds; round++) {
    const one = await drain(1);
    const two = await drain(2);
    deliveries = one.deliveries;
    rounds.push({ oneWorkerPerSecond: one.perSecond, twoWorkersPerSecond: two.perSecond });
  }
  return {
    deliveries,
    githubLatencyMs: SCALING_GITHUB_MS,
    oneWorkerPerSecond: median(rounds.map((r) => r.oneWorkerPerSecond)),
    twoWorkersPerSecond: median(rounds.map((r) => r.twoWorkersPerSecond)),
    ...(rounds.length > 1 ? { rounds } : {}),
  };
}

/** Delivery status, connections (health) and diagnostics over the API, with a year of history in the store. */
async function measureQueries(
  options: CompareOptions,
  on: { label: string; databaseUrl: string | undefined },
): Promise<NonNullable<CompareMeasurements['queries']>> {
  const { progress } = options;
  const consumers: ConsumerSpec[] = Array.from({ length: 10 }, (_, i) => ({
    account: `reader${i + 1}`,
    repo: 'app',
    user: `reader-user${i + 1}`,
  }));
  return withTarget(
    () =>
      startZekt({
        name: `Zekt with a year of history (${on.label})`,
        consumers,
        durable: true,
        databaseUrl: on.databaseUrl,
      }),
    async (target) => {
      const store = await openStore(loadStoreConfig(target.env));
      try {
        const subscriptions = await store.db
          .selectFrom('subscriptions')
          .innerJoin('services', 'services.service_id', 'subscriptions.service_id')
          .select([
            'subscriptions.subscription_id',
            'subscriptions.consumer_account_id',
            'subscriptions.consumer_repository_id',
            'services.service_id',
            'services.account_id',
            'services.repository_id',
          ])
          .execute();
        const first = subscriptions[0];
        if (!first) throw new Error('the query scenario has no subscriptions');
        progress(`queries (${on.label}): writing ${options.records.toLocaleString('en')} delivery records…`);
        let reported = 0;
        await seedDeliveryHistory(store, {
          records: options.records,
          now: Date.now(),
          providerAccountId: first.account_id,
          providerRepositoryId: first.repository_id,
          serviceId: first.service_id,
          subscriptions: subscriptions.map((s) => ({
            subscriptionId: s.subscription_id,
            consumerAccountId: s.consumer_account_id,
            consumerRepositoryId: s.consumer_repository_id,
          })),
          progress: (done) => {
            if (done - reported >= 200_000) {
              reported = done;
              progress(`  ${done.toLocaleString('en')}`);
            }
          },
        });
        // A year-old PostgreSQL database has planner statistics (autovacuum analyzes a table as it
        // grows); one loaded in a minute has none until autovacuum gets to it, and plans blind.
        // Nor is it flushing that year of writes: the million rows' WAL sets off checkpoints that
        // were still writing while the queries ran (a p99 of 168 and 265 ms, p50 20–40 ms, in
        // two runs of 29 November), so the load is checkpointed before it is queried. CHECKPOINT
        // needs a superuser or `pg_checkpoint`; without either the queries run as they are.
        if (store.dialect === 'postgres') {
          await sql`analyze`.execute(store.db);
          await sql`checkpoint`.execute(store.db).catch((error: unknown) => {
            progress(`  (no CHECKPOINT before the queries: ${(error as Error).message})`);
          });
        }
      } finally {
        await store.close();
      }
      const base = target.url.replace(/\/webhooks\/github$/, '');
      const get = async (path: string) => {
        const started = preciseNow();
        const response = await fetch(`${base}${path}`, {
          headers: { authorization: `Bearer ${target.providerToken}` },
        });
        await response.arrayBuffer();
        if (!response.ok) throw new Error(`GET ${path} answered ${response.status}`);
        return preciseNow() - started;
      };
      const sub = target.subscriptionIds[0] as string;
      const queries: Array<{ name: string; path: string }> = [
        { name: 'delivery status (GET /api/v1/deliveries)', path: '/api/v1/deliveries?limit=50' },
        { name: 'delivery status of a connection', path: `/api/v1/deliveries?connection=${sub}&limit=50` },
        { name: 'health (GET /api/v1/connections)', path: '/api/v1/connections' },
        { name: 'diagnostics of a connection', path: `/api/connections/${sub}/diagnostics` },
      ];
      const results = [];
      for (const query of queries) {
        await get(query.path);
        const samples: number[] = [];
        for (let i = 0; i < 100; i++) samples.push(Math.round((await get(query.path)) * 10) / 10);
        const latency = summarizeLatencies(samples);
        const name = on.databaseUrl ? `${query.name} (${on.label})` : query.name;
        progress(`  ${name}: p50 ${latency.p50} ms, p99 ${latency.p99} ms`);
        results.push({ name, latency });
      }
      return { records: options.records, results };
    },
  );
}
