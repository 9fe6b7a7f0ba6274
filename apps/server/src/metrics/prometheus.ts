import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { ERROR_CATEGORIES, type ErrorCategory } from '../domain/error-category.js';
import type { QueueStats } from '../store/queue-stats.js';
import {
  type DispatchStart,
  type IngestEndpoint,
  type LeaseLoss,
  type Metrics,
  RETENTION_TABLES,
  type RetentionTable,
  SCHEMA_CHECK_RESULTS,
  type SchemaCheckResult,
  SPAN_DROPS,
  type SpanDrop,
  STORE_ERROR_CATEGORIES,
  type StoreErrorCategory,
  WEBHOOK_METRIC_OUTCOMES,
  type WebhookMetricOutcome,
} from './metrics.js';

/**
 * The Prometheus side of `Metrics`: one registry per Zekt instance (tests run several in one
 * process, so the global default registry is never used), the process's runtime metrics beside
 * it, and the queue gauges read from the store when scraped. docs/operations.md lists every metric.
 *
 * No label names an account, an installation, a repository or a delivery: a label per tenant
 * would grow without bound with the deployment (every series is kept by Prometheus) and would
 * tell anyone who can scrape which accounts use Zekt and how much. Per-tenant numbers are in
 * the management API, scoped by account.
 */
export interface PrometheusMetrics extends Metrics {
  readonly registry: Registry;
  /** The exposition text and its content type. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

export interface PrometheusMetricsOptions {
  /** Reads the queue gauges; null: this process reports no queue gauges. */
  queueStats: ((now: number) => Promise<QueueStats>) | null;
  now: () => number;
  /** Queue gauges are read at most this often; scrapes in between get the last reading. */
  queueStatsCacheMs?: number;
}

const SECONDS = 1000;

export function createPrometheusMetrics(options: PrometheusMetricsOptions): PrometheusMetrics {
  const registry = new Registry();
  const registers = [registry];

  const webhooks = new Counter({
    name: 'zekt_webhooks_received_total',
    help: 'Requests to /webhooks/github by outcome',
    labelNames: ['outcome'] as const,
    registers,
  });
  const webhookChildren = bind(WEBHOOK_METRIC_OUTCOMES, (outcome) => zeroed(webhooks.labels(outcome)));

  const ingest = new Histogram({
    name: 'zekt_ingest_latency_seconds',
    help: 'Ingestion requests (webhook, message) from the first byte read to the answer written',
    labelNames: ['endpoint'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const ingestChildren = bind(['webhook', 'message'] as const, (endpoint) => {
    ingest.zero({ endpoint });
    return ingest.labels(endpoint);
  });

  const attempts = new Counter({
    name: 'zekt_dispatch_attempts_total',
    help: 'repository_dispatch attempts by result and error category (none when accepted)',
    labelNames: ['result', 'category'] as const,
    registers,
  });
  const accepted = zeroed(attempts.labels('accepted', 'none'));
  const failedChildren = bind(ERROR_CATEGORIES, (category) => zeroed(attempts.labels('failed', category)));

  const schemaChecks = new Counter({
    name: 'zekt_message_schema_checks_total',
    help: 'Messages checked against their services’ schemas, by result (valid, violation: accepted in warn mode, refused: 422 in enforce mode, stopped: a check stopped at its time bound or memory limit)',
    labelNames: ['result'] as const,
    registers,
  });
  const schemaCheckChildren = bind(SCHEMA_CHECK_RESULTS, (result) => zeroed(schemaChecks.labels(result)));

  const endToEnd = new Histogram({
    name: 'zekt_end_to_end_latency_seconds',
    help: 'From the completion webhook received to GitHub accepting the repository_dispatch (first deliveries, retries included, replays not)',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21_600, 86_400],
    registers,
  });

  const pacing = new Histogram({
    name: 'zekt_pacing_delay_seconds',
    help: "How long pacing held a dispatch back until its consumer installation's next slot (0: not held)",
    buckets: [0, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers,
  });

  const starts = new Counter({
    name: 'zekt_dispatch_starts_total',
    help: 'Attempts the dispatcher started, by how it took the delivery: handoff (leased in the transaction that created it) or claim (claimed from the table)',
    labelNames: ['path'] as const,
    registers,
  });
  const startChildren = bind(['handoff', 'claim'] as const, (path) => zeroed(starts.labels(path)));

  const leases = new Counter({
    name: 'zekt_lost_leases_total',
    help: 'Delivery leases lost: taken_over (another worker owned it when the attempt was recorded), reclaimed (claimed after the lease of the previous owner expired before it recorded its attempt)',
    labelNames: ['kind'] as const,
    registers,
  });
  const leaseChildren = bind(['taken_over', 'reclaimed'] as const, (kind) => zeroed(leases.labels(kind)));

  const retention = new Counter({
    name: 'zekt_retention_deleted_rows_total',
    help: 'Rows the retention sweeper deleted, by table',
    labelNames: ['table'] as const,
    registers,
  });
  const retentionChildren = bind(RETENTION_TABLES, (table) => zeroed(retention.labels(table)));

  const storeErrors = new Counter({
    name: 'zekt_store_errors_total',
    help: 'Statements the store failed, by category (store/store-errors.ts)',
    labelNames: ['category'] as const,
    registers,
  });
  const storeChildren = bind(STORE_ERROR_CATEGORIES, (category) => zeroed(storeErrors.labels(category)));

  const spansExported = zeroed(
    new Counter({
      name: 'zekt_trace_spans_exported_total',
      help: 'Spans the OTLP exporter accepted (0 while tracing is off)',
      registers,
    }),
  );
  const spansDropped = new Counter({
    name: 'zekt_trace_spans_dropped_total',
    help: 'Spans never exported: queue_full (the export queue was full: the tracing backend is slow, down or hangs), export_failed (an export failed or timed out)',
    labelNames: ['reason'] as const,
    registers,
  });
  const dropChildren = bind(SPAN_DROPS, (reason) => zeroed(spansDropped.labels(reason)));

  if (options.queueStats) {
    const readQueueStats = options.queueStats;
    const cacheMs = options.queueStatsCacheMs ?? 5_000;
    // One reading at a time, kept for cacheMs: a burst of scrapes costs the store one set of queries.
    let cached: { at: number; stats: Promise<QueueStats> } | null = null;
    const stats = (): Promise<QueueStats> => {
      const now = options.now();
      if (cached === null || now - cached.at >= cacheMs) {
        const reading = readQueueStats(now);
        cached = { at: now, stats: reading };
        // A failed reading is not kept: the next scrape asks again.
        void reading.catch(() => {
          if (cached?.stats === reading) cached = null;
        });
      }
      return cached.stats;
    };
    // A store that does not answer must not fail the scrape: the process is up, its counters (store
    // errors among them) are what the operator needs then. The gauges read NaN: unknown.
    const statsOrNull = () => stats().catch(() => null);
    new Gauge({
      name: 'zekt_deliveries',
      help: 'Deliveries in the store by state: pending, accepted, failed (the dispatch state), awaiting_start (accepted, durable, no workflow seen yet)',
      labelNames: ['state'] as const,
      registers,
      async collect() {
        const read = await statsOrNull();
        this.set({ state: 'pending' }, read?.byDispatchState.pending ?? Number.NaN);
        this.set({ state: 'accepted' }, read?.byDispatchState.accepted ?? Number.NaN);
        this.set({ state: 'failed' }, read?.byDispatchState.failed ?? Number.NaN);
        this.set({ state: 'awaiting_start' }, read?.awaitingStart ?? Number.NaN);
      },
    });
    new Gauge({
      name: 'zekt_queue_depth',
      help: 'Pending deliveries due now',
      registers,
      async collect() {
        this.set((await statsOrNull())?.dueNow ?? Number.NaN);
      },
    });
    new Gauge({
      name: 'zekt_queue_oldest_due_age_seconds',
      help: 'How long the longest-waiting due delivery has been due (0: none is due)',
      registers,
      async collect() {
        const read = await statsOrNull();
        if (read === null) this.set(Number.NaN);
        else if (read.oldestDueAt === null) this.set(0);
        else this.set(Math.max(0, options.now() - read.oldestDueAt) / SECONDS);
      },
    });
  }

  return {
    registry,
    async scrape() {
      const [runtime, own] = await Promise.all([processRegistry().metrics(), registry.metrics()]);
      return { contentType: registry.contentType, body: `${runtime}\n${own}` };
    },
    webhookReceived(outcome: WebhookMetricOutcome) {
      webhookChildren[outcome].inc();
    },
    ingestAnswered(endpoint: IngestEndpoint, milliseconds: number) {
      ingestChildren[endpoint].observe(milliseconds / SECONDS);
    },
    dispatchAttempted(category: ErrorCategory | null) {
      (category === null ? accepted : (failedChildren[category] ?? failedChildren.other)).inc();
    },
    endToEnd(milliseconds: number) {
      endToEnd.observe(Math.max(0, milliseconds) / SECONDS);
    },
    pacingDelayed(milliseconds: number) {
      pacing.observe(Math.max(0, milliseconds) / SECONDS);
    },
    dispatchStarted(path: DispatchStart) {
      startChildren[path].inc();
    },
    leaseLost(kind: LeaseLoss) {
      leaseChildren[kind].inc();
    },
    retentionDeleted(table: RetentionTable, rows: number) {
      if (rows > 0) retentionChildren[table].inc(rows);
    },
    storeFailed(category: StoreErrorCategory) {
      storeChildren[category].inc();
    },
    spansExported(count: number) {
      if (count > 0) spansExported.inc(count);
    },
    spansDropped(reason: SpanDrop, count: number) {
      if (count > 0) dropChildren[reason].inc(count);
    },
    messageSchemaChecked(result: SchemaCheckResult) {
      schemaCheckChildren[result].inc();
    },
  };
}

let runtimeRegistry: Registry | null = null;

/**
 * The process's runtime metrics (CPU, memory, event-loop lag, GC) on a registry of their own, made
 * once per process: they describe the process, not an instance, and each collection keeps an
 * event-loop monitor and a GC observer alive for good, so one per instance would pile up in tests
 * that build many.
 */
function processRegistry(): Registry {
  if (runtimeRegistry === null) {
    runtimeRegistry = new Registry();
    collectDefaultMetrics({ register: runtimeRegistry });
  }
  return runtimeRegistry;
}

/** Label children made once, so an event increments an object it already has. */
function bind<K extends string, V>(keys: readonly K[], make: (key: K) => V): Record<K, V> {
  return Object.fromEntries(keys.map((key) => [key, make(key)])) as Record<K, V>;
}

/** A counter series exported from the start at 0, so `rate()` and absence checks see it before its first event. */
function zeroed<C extends { inc(value?: number): void }>(child: C): C {
  child.inc(0);
  return child;
}
