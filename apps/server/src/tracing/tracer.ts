import type { TraceRunKey } from '../domain/trace-context.js';

/**
 * What the components see of tracing (docs/operations.md, *Tracing*): a span is started under a
 * parent, its W3C context is known at once (to store with a row, or to send to a consumer), and
 * it is ended with what happened. Components never import OpenTelemetry: the composition root
 * gives them the SDK-backed tracer (otel-tracer.ts, loaded only when an OTLP endpoint is set), and
 * everything else gets `noTracer`, whose calls do nothing and allocate nothing.
 *
 * Span names and attribute names are closed lists: an attribute names accounts, repositories,
 * runs, events and deliveries by id or name, never a payload, a token, a secret or a URL.
 */
export const SPAN_NAMES = [
  /** The provider's workflow run: the root of the run's trace (from `run_started_at` to its completion). */
  'zekt.run',
  /** A provider's completion webhook (`workflow_run.completed`) received and stored. */
  'zekt.webhook',
  /** A message (`POST /api/events/receive`) received. */
  'zekt.message',
  /** A completion event routed: the policy decided, deliveries created. */
  'zekt.route',
  /** One delivery created (by routing, a replay or a recovery); its attempts and reports are its children. */
  'zekt.delivery',
  /** One dispatch attempt of a delivery (a call to GitHub, or one refused before the call). */
  'zekt.dispatch',
  /** A consumer's confirm (API call or completion tracking). */
  'zekt.confirm',
  /** A consumer's complete (API call or completion tracking). */
  'zekt.complete',
  /** A replay asked for over the API or the CLI. */
  'zekt.replay',
  /** A replay made by a bulk recovery. */
  'zekt.recovery',
] as const;
export type SpanName = (typeof SPAN_NAMES)[number];

/** Every attribute a Zekt span may carry (a test checks every exported one against this list). */
export const SPAN_ATTRIBUTE_NAMES = [
  'zekt.account.id',
  'zekt.repository.id',
  'zekt.repository',
  'zekt.workflow.path',
  'zekt.run.id',
  'zekt.run.attempt',
  'zekt.run.conclusion',
  'zekt.github.delivery',
  'zekt.event.id',
  'zekt.event_type',
  'zekt.message.id',
  'zekt.message.bytes',
  'zekt.outcome',
  'zekt.deliveries',
  'zekt.delivery.id',
  'zekt.delivery.durable',
  'zekt.delivery.status',
  'zekt.subscription.id',
  'zekt.consumer.account.id',
  'zekt.consumer.repository.id',
  'zekt.attempt.number',
  'zekt.retry_number',
  'zekt.error.category',
  'zekt.failure_reason',
  'http.response.status_code',
  'zekt.replay_of',
  'zekt.recovery.id',
] as const;
export type SpanAttributeName = (typeof SPAN_ATTRIBUTE_NAMES)[number];
export type SpanAttributes = Partial<Record<SpanAttributeName, string | number | boolean | null | undefined>>;

/**
 * Where a span belongs. `traceparent`: under a stored context (an event's, a delivery's); null
 * means the row was made while tracing was off, and nothing under it is traced. `run`: directly
 * under the run's root span, derived from the run key. `root`: the run's root span itself.
 */
export type SpanParent = { traceparent: string | null } | { run: TraceRunKey } | { root: TraceRunKey };

export interface SpanOptions {
  attributes?: SpanAttributes;
  /** Epoch ms; default now. */
  startMs?: number;
  /** A span id decided by the caller (an attempt's, derived from its delivery and number). */
  spanId?: string;
}

export interface SpanEnd {
  attributes?: SpanAttributes;
  /** Epoch ms; default now. */
  endMs?: number;
  /** The span failed: a short, fixed description (an error category, an outcome), never free text from outside. */
  error?: string;
}

export interface Span {
  /** This span's W3C `traceparent`; null when tracing is off (or the parent was not traced). */
  readonly traceparent: string | null;
  end(end?: SpanEnd): void;
}

export interface Tracer {
  /** False: every span is the no-op span and nothing is exported. */
  readonly enabled: boolean;
  start(name: SpanName, parent: SpanParent, options?: SpanOptions): Span;
  /**
   * Exports what is queued, waiting at most `timeoutMs`, and stops: an exporter that hangs never
   * holds up a process that is stopping.
   */
  shutdown(timeoutMs?: number): Promise<void>;
}

/** The span of tracing off: no context, nothing recorded. */
export const noSpan: Span = {
  traceparent: null,
  end() {},
};

/** Tracing off: the default of every component, and what a process without an OTLP endpoint uses. */
export const noTracer: Tracer = {
  enabled: false,
  start: () => noSpan,
  async shutdown() {},
};
