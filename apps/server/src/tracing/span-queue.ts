import type { Context } from '@opentelemetry/api';
import { TraceFlags } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanDrop } from '../metrics/metrics.js';

/**
 * The span processor between Zekt's spans and the OTLP exporter: a bounded queue, batches sent one
 * export at a time, every span that is not exported counted. A span ending costs a push onto an
 * array; nothing on the path of a webhook or a dispatch ever waits for the tracing backend. When
 * the backend is slow, down or hangs, the queue fills to `maxQueueSize` and further spans are
 * dropped (`queue_full`); an export that fails or outlasts `exportTimeoutMs` loses its batch
 * (`export_failed`) — spans are not worth a retry that would hold memory during an outage.
 *
 * The SDK's BatchSpanProcessor does the same but keeps its drop count to itself; the operator needs
 * it as a metric (`zekt_trace_spans_dropped_total`).
 */
export interface SpanQueueOptions {
  exporter: SpanExporter;
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduleDelayMs: number;
  exportTimeoutMs: number;
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
  let queue: ReadableSpan[] = [];
  let exporting: Promise<void> | null = null;
  /** Gives up on the export in flight (its batch counts as failed). */
  let abandon: (() => void) | null = null;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;

  function schedule(): void {
    if (exporting !== null || queue.length === 0) return;
    if (queue.length >= options.maxExportBatchSize) {
      exportBatch();
      return;
    }
    if (timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      exportBatch();
    }, options.scheduleDelayMs);
    // A pending batch never keeps a stopping process alive.
    timer.unref();
  }

  function exportBatch(): Promise<void> {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    if (exporting !== null) return exporting;
    if (queue.length === 0) return Promise.resolve();
    const batch = queue.splice(0, options.maxExportBatchSize);
    exporting = new Promise<void>((done) => {
      let settled = false;
      const settle = (exported: boolean) => {
        if (settled) return;
        settled = true;
        abandon = null;
        clearTimeout(deadline);
        if (exported) options.onExported(batch.length);
        else options.onDropped('export_failed', batch.length);
        exporting = null;
        done();
        if (!stopped) schedule();
      };
      const deadline = setTimeout(() => settle(false), options.exportTimeoutMs);
      deadline.unref();
      abandon = () => settle(false);
      try {
        options.exporter.export(batch, (result) => settle(result.code === ExportResultCode.SUCCESS));
      } catch {
        settle(false);
      }
    });
    return exporting;
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
      while (queue.length > 0 || exporting !== null) await exportBatch();
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
      abandon?.();
    },
  };
}
