import { createHash } from 'node:crypto';

/**
 * One trace per provider run (OpenTelemetry, W3C Trace Context). The message and the completion
 * webhook of a run arrive separately, possibly at two API processes, and neither knows whether
 * the other came first: so neither can hand the other a trace id. Both derive it from the run key
 * instead — the same key gives the same id on every process, at any time — and so does the root
 * span of the run, which every other span of the run descends from. Span ids of attempts are
 * derived too, from the delivery and the attempt's number: the dispatcher sends an attempt's
 * context to the consumer before the attempt is recorded, and records its span afterwards.
 *
 * Ids are lower-case hex as W3C writes them: 32 digits for a trace, 16 for a span, never all
 * zeros (an all-zero id is invalid and would be dropped by every tracing backend).
 * https://www.w3.org/TR/trace-context/#traceparent-header
 */

/** A provider run: `(provider repository id, run_id, run_attempt)`; run ids may come as text (a delivery's correlation id). */
export interface TraceRunKey {
  repositoryId: number;
  runId: number | string;
  runAttempt: number;
}

/** A span's identity as W3C trace context carries it. */
export interface TraceContext {
  traceId: string;
  spanId: string;
  /** The trace is recorded (the `sampled` flag): spans under it are exported. */
  sampled: boolean;
}

/**
 * The trace id of a provider run: SHA-256 of the run key, truncated to 16 bytes.
 *
 * @example runTraceId({ repositoryId: 1296269, runId: 30433642, runAttempt: 1 }) // 32 hex digits, the same on every call
 */
export function runTraceId(run: TraceRunKey): string {
  return derivedId(`zekt:run:${runKeyText(run)}`, 16);
}

/** The span id of the run's root span (`zekt.run`), the parent of its message and webhook spans. */
export function runSpanId(run: TraceRunKey): string {
  return derivedId(`zekt:run-span:${runKeyText(run)}`, 8);
}

/**
 * The span id of attempt `number` of a delivery (`zekt.dispatch`). A delivery's attempts have
 * distinct numbers (a claim that did not become an attempt gives its number back before any call).
 */
export function attemptSpanId(deliveryId: string, number: number): string {
  return derivedId(`zekt:attempt:${deliveryId}:${number}`, 8);
}

/**
 * `traceparent` of a span: version 00, the ids, the sampled flag.
 *
 * @example formatTraceparent({ traceId: '4bf9…4736', spanId: '00f0…02b7', sampled: true }) // '00-4bf9…4736-00f0…02b7-01'
 */
export function formatTraceparent(context: TraceContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.sampled ? '01' : '00'}`;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * Reads a `traceparent`; null unless it is valid W3C trace context: version 00 exactly as
 * written, a later version with at least the fields of 00 (the spec's forward compatibility),
 * never version ff, never an all-zero id.
 *
 * @example parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01') // { traceId: '4bf9…', spanId: '00f0…', sampled: true }
 */
export function parseTraceparent(text: unknown): TraceContext | null {
  if (typeof text !== 'string' || text.length > 512) return null;
  const match = TRACEPARENT.exec(text);
  if (!match) return null;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string | undefined,
  ];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/**
 * The `traceparent` of a child span with a known id, under a stored parent context: same trace,
 * same sampling decision. Null when there is no (valid) parent: nothing is traced then.
 */
export function childTraceparent(parent: string | null | undefined, spanId: string): string | null {
  const context = parseTraceparent(parent);
  return context === null ? null : formatTraceparent({ ...context, spanId });
}

function runKeyText(run: TraceRunKey): string {
  return `${run.repositoryId}:${String(run.runId)}:${run.runAttempt}`;
}

function derivedId(input: string, bytes: 8 | 16): string {
  const digest = createHash('sha256').update(input).digest();
  // SHA-256 output is all zeros with probability 2^-64 at these lengths; an invalid id is still
  // never produced: the last byte becomes 1 then.
  if (digest.subarray(0, bytes).every((byte) => byte === 0)) digest[bytes - 1] = 1;
  return digest.toString('hex', 0, bytes);
}
