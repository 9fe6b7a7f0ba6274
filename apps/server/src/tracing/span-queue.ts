import type { Context } from '@opentelemetry/api';
import { TraceFlags } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanDrop } from '../metrics/metrics.js';

/**
 * The span processor between Zekt's spans and the OTLP exporter: a bounded queue, batches sent two
 * exports at a time at most, every span that is not exported counted. A span ending costs a push
 * onto an array; nothing on the path of a webhook or a dispatch ever waits for the tracing backend.
 * When the backend is slow, down or hangs, the queue fills to `maxQueueSize` and further spans are
 * dropped (`queue_full`); an export that fails or outlasts `exportTimeoutMs` loses its batch
 * (`export_failed`) — spans are not worth a retry that would hold memory during an outage.
 *
 * The SDK's BatchSpanProcessor does much the same, but one export at a time — measured with
 * scripts/trace-cost.mjs at ~1,100 runs a second (8 spans each), that dropped up to 7 % of the
 * spans while each export waited for its answer, two at a time none — and it keeps its drop count
 * to itself; the operator needs it as a metric (`zekt_trace_spans_dropped_total`).
 */
export interface SpanQueueOptions {
  exporter: SpanExporter;
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduleDelayMs: number;
  exportTimeoutMs: number;
  /** Exports under way at once at most (default 2): one slow answer does not stop the next batch. */
  maxConcurrentExports?: number;
  onExported(count: number): void;
  onDropped(reason: SpanDrop, count: number): void;
}

export interface SpanQueue extends SpanProcessor {
  /** Spans waiting for export now. */
  readonly size: number;
  /** Stops taking spans and drops the ones still waiting, counted as `export_failed` (a stopping process that cannot wait longer). */
  discard(): void;
}

export function createSpanQueue(options: SpanQueueOptions): SpanQueue {
  const maxInFlight = options.maxConcurrentExports ?? 2;
  let queue: ReadableSpan[] = [];
  /** Exports under way, each with what gives up on it (its batch then counts as failed). */
  const inFlight = new Map<Promise<void>, () => void>();
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;

  function schedule(): void {
    while (inFlight.size < maxInFlight && queue.length >= options.maxExportBatchSize) exportBatch();
    if (inFlight.size >= maxInFlight || queue.length === 0 || timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      if (inFlight.size < maxInFlight) exportBatch();
    }, options.scheduleDelayMs);
    // A pending batch never keeps a stopping process alive.
    timer.unref();
  }

  function exportBatch(): void {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    if (queue.length === 0) return;
    const batch = queue.splice(0, options.maxExportBatchSize);
    let settle: (exported: boolean) => void = () => {};
    const exported = new Promise<void>((done) => {
      let settled = false;
      settle = (ok: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        inFlight.delete(exported);
        if (ok) options.onExported(batch.length);
        else options.onDropped('export_failed', batch.length);
        done();
        if (!stopped) schedule();
      };
      const deadline = setTimeout(() => settle(false), options.exportTimeoutMs);
      deadline.unref();
    });
    inFlight.set(exported, () => settle(false));
    try {
      options.exporter.export(batch, (result) => settle(result.code === ExportResultCode.SUCCESS));
    } catch {
      settle(false);
    }
  }

  return {
    get size() {
      return queue.length;
    },
    onStart(_span: Span, _parent: Context) {},
    onEnd(span: ReadableSpan) {
      if (stopped || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
      if (queue.length >= options.maxQueueSize) {
        options.onDropped('queue_full', 1);
        return;
      }
      queue.push(span);
      schedule();
    },
    async forceFlush() {
      while (queue.length > 0 || inFlight.size > 0) {
        while (inFlight.size < maxInFlight && queue.length > 0) exportBatch();
        await Promise.race(inFlight.keys());
      }
    },
    async shutdown() {
      // The caller bounds how long it waits (tracer.shutdown) and then discards what is left.
      await this.forceFlush();
      stopped = true;
      await options.exporter.shutdown();
    },
    discard() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      if (queue.length > 0) options.onDropped('export_failed', queue.length);
      queue = [];
      for (const abandon of [...inFlight.values()]) abandon();
    },
  };
}
