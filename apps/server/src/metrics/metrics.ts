import type { ErrorCategory } from '../domain/error-category.js';
import type { StoreErrorCategory } from '../store/store-errors.js';

export type { StoreErrorCategory };

/**
 * What the components report to the operator's metrics (docs/operations.md, *Metrics*). The
 * components see only this interface, never prom-client: the composition root gives them the
 * Prometheus implementation (prometheus.ts), tests that build a component alone get `noMetrics`.
 * Every method is cheap enough for the hot path: no label lookup, no allocation.
 */
export interface Metrics {
  /** A request to `/webhooks/github` was answered (or refused) with this outcome. */
  webhookReceived(outcome: WebhookMetricOutcome): void;
  /** From the request's first byte to the answer written, for the two ingestion endpoints. */
  ingestAnswered(endpoint: IngestEndpoint, milliseconds: number): void;
  /** A dispatch attempt ended: accepted by GitHub (null) or failed with this category. */
  dispatchAttempted(category: ErrorCategory | null): void;
  /** GitHub accepted the first dispatch of an event this long after Zekt received its webhook. */
  endToEnd(milliseconds: number): void;
  /** Pacing held a dispatch back this long (0: its installation's slot was free). */
  pacingDelayed(milliseconds: number): void;
  /** The dispatcher started an attempt of a delivery it took this way (see `DispatchStart`). */
  dispatchStarted(path: DispatchStart): void;
  /** A worker lost a delivery's lease (see `LeaseLoss`). */
  leaseLost(kind: LeaseLoss): void;
  /** The retention sweeper deleted this many rows of a table. */
  retentionDeleted(table: RetentionTable, rows: number): void;
  /** The store refused or failed a statement. */
  storeFailed(category: StoreErrorCategory): void;
  /** Spans the OTLP exporter accepted (tracing on). */
  spansExported(count: number): void;
  /** Spans never exported (see `SpanDrop`): tracing never holds up the work it describes. */
  spansDropped(reason: SpanDrop, count: number): void;
  /** A message was checked against its services' schemas, with this result (see `SchemaCheckResult`). */
  messageSchemaChecked(result: SchemaCheckResult): void;
}

/**
 * Why spans were dropped: `queue_full`, the export queue was full (the backend is slow, down or
 * hangs, and spans are dropped rather than waited for); `export_failed`, an export failed or
 * timed out (OTEL_EXPORTER_OTLP_TIMEOUT) and its spans are not sent again.
 */
export const SPAN_DROPS = ['queue_full', 'export_failed'] as const;
export type SpanDrop = (typeof SPAN_DROPS)[number];

/**
 * `valid`: every schema in force accepted the message; `violation`: a warn-mode schema did not
 * (accepted, recorded); `refused`: an enforced one did not (422); `stopped`: a check was stopped
 * at its time bound or memory limit (counted besides its result).
 */
export const SCHEMA_CHECK_RESULTS = ['valid', 'violation', 'refused', 'stopped'] as const;
export type SchemaCheckResult = (typeof SCHEMA_CHECK_RESULTS)[number];

export const WEBHOOK_METRIC_OUTCOMES = [
  'accepted',
  'duplicate',
  'ignored',
  'applied',
  'pong',
  'bad_signature',
  'unsupported',
  'malformed',
  'forbidden',
  /** Refused before it was read: too large, too slow, body budget exhausted. */
  'rejected',
  /** The store did not answer (503) or Zekt failed (500). */
  'error',
] as const;
export type WebhookMetricOutcome = (typeof WEBHOOK_METRIC_OUTCOMES)[number];

export type IngestEndpoint = 'webhook' | 'message';

/**
 * `taken_over`: the worker came back from GitHub and found another worker owned the delivery (its
 * lease had expired meanwhile), so its record was refused. `reclaimed`: a worker claimed a
 * delivery whose previous owner's lease expired before that owner recorded its attempt (the
 * process died or stalled); a non-durable one is then failed `attempt_outcome_unknown`.
 */
export type LeaseLoss = 'taken_over' | 'reclaimed';

/**
 * How a delivery reached the dispatcher's pool: `handoff`, leased in the transaction that created
 * it because the pool and its installation had room (delivery/handoff.ts); `claim`, claimed from
 * the table (created while there was no room, a retry, a replay, another process's).
 */
export type DispatchStart = 'handoff' | 'claim';

export const RETENTION_TABLES = [
  'deliveries',
  'events',
  'archives',
  'messages',
  'webhook_deliveries',
  'sessions',
  'replay_requests',
  'rate_limit_counters',
  'audit_entries',
  'schema_violations',
] as const;
export type RetentionTable = (typeof RETENTION_TABLES)[number];

/**
 * store/store-errors.ts's classes: the database unreachable, a conflict it broke between concurrent
 * transactions, a value refused, a duplicate, anything else.
 */
export const STORE_ERROR_CATEGORIES: readonly StoreErrorCategory[] = [
  'unavailable',
  'conflict',
  'rejected_value',
  'unique_violation',
  'other',
];

/** For components built without the composition root (unit tests): reports nowhere. */
export const noMetrics: Metrics = {
  webhookReceived() {},
  ingestAnswered() {},
  dispatchAttempted() {},
  endToEnd() {},
  pacingDelayed() {},
  dispatchStarted() {},
  leaseLost() {},
  retentionDeleted() {},
  storeFailed() {},
  spansExported() {},
  spansDropped() {},
  messageSchemaChecked() {},
};
