import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  type IdGenerator,
  ParentBasedSampler,
  RandomIdGenerator,
  type Sampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import {
  formatTraceparent,
  parseTraceparent,
  runSpanId,
  runTraceId,
  type TraceRunKey,
} from '../domain/trace-context.js';
import type { SpanDrop } from '../metrics/metrics.js';
import { createSpanQueue } from './span-queue.js';
import {
  noSpan,
  type SpanAttributes,
  type SpanEnd,
  type SpanName,
  type SpanOptions,
  type SpanParent,
  type Tracer,
  type Span as ZektSpan,
} from './tracer.js';
import type { TracingConfig } from './tracing-config.js';

/**
 * The tracer of a process with tracing on: the OpenTelemetry SDK, its OTLP/HTTP JSON exporter, and
 * Zekt's span queue (span-queue.ts). Loaded only when an OTLP endpoint is configured
 * (load-tracer.ts imports this module dynamically), so a process without one never loads the SDK.
 *
 * Contexts are passed explicitly, never through an async context manager: every span names its
 * parent (a stored `traceparent`, or the run key), which is all a span needs when its trace spans
 * processes and hours.
 */
export interface OtelTracerOptions {
  settings: TracingConfig;
  /** Resource attributes of this process, besides the configured ones. */
  resource: { role: string; instanceId: string };
  onExported(count: number): void;
  onDropped(reason: SpanDrop, count: number): void;
}

const KIND: Record<SpanName, SpanKind> = {
  'zekt.run': SpanKind.INTERNAL,
  'zekt.webhook': SpanKind.SERVER,
  'zekt.message': SpanKind.SERVER,
  'zekt.route': SpanKind.INTERNAL,
  'zekt.delivery': SpanKind.PRODUCER,
  'zekt.dispatch': SpanKind.CLIENT,
  'zekt.confirm': SpanKind.SERVER,
  'zekt.complete': SpanKind.SERVER,
  'zekt.replay': SpanKind.INTERNAL,
  'zekt.recovery': SpanKind.INTERNAL,
};

export function createOtelTracer(options: OtelTracerOptions): Tracer {
  const { settings } = options;
  const ids = new PinnableIds();
  const sampler = samplerOf(settings.sampler);
  const queue = createSpanQueue({
    exporter: new OTLPTraceExporter({
      url: settings.url,
      headers: settings.headers,
      timeoutMillis: settings.timeoutMs,
      compression: settings.compression === 'gzip' ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE,
    }),
    maxQueueSize: settings.maxQueueSize,
    maxExportBatchSize: settings.maxExportBatchSize,
    scheduleDelayMs: settings.scheduleDelayMs,
    exportTimeoutMs: settings.exportTimeoutMs,
    onExported: options.onExported,
    onDropped: options.onDropped,
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      ...settings.resourceAttributes,
      'service.name': settings.serviceName,
      'service.instance.id': options.resource.instanceId,
      'zekt.role': options.resource.role,
    }),
    sampler,
    idGenerator: ids,
    spanProcessors: [queue],
  });
  const tracer = provider.getTracer('zekt');

  /** The run's root context, sampled as the sampler decides for the run's trace id. */
  function runContext(run: TraceRunKey): Context {
    const traceId = runTraceId(run);
    const decision = sampler.shouldSample(ROOT_CONTEXT, traceId, 'zekt.run', SpanKind.INTERNAL, {}, []);
    return trace.setSpanContext(ROOT_CONTEXT, {
      traceId,
      spanId: runSpanId(run),
      traceFlags:
        decision.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE,
      isRemote: true,
    });
  }

  return {
    enabled: true,
    start(name: SpanName, parent: SpanParent, spanOptions: SpanOptions = {}): ZektSpan {
      let context: Context = ROOT_CONTEXT;
      let pinned: Pinned = spanOptions.spanId === undefined ? {} : { spanId: spanOptions.spanId };
      if ('root' in parent) {
        pinned = { traceId: runTraceId(parent.root), spanId: runSpanId(parent.root) };
      } else if ('run' in parent) {
        context = runContext(parent.run);
      } else {
        const stored = parseTraceparent(parent.traceparent);
        if (stored === null) return noSpan;
        context = trace.setSpanContext(ROOT_CONTEXT, {
          traceId: stored.traceId,
          spanId: stored.spanId,
          traceFlags: stored.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
          isRemote: true,
        });
      }
      const span = ids.pinnedFor(pinned, () =>
        tracer.startSpan(
          name,
          {
            kind: KIND[name],
            attributes: attributesOf(spanOptions.attributes),
            ...(spanOptions.startMs === undefined ? {} : { startTime: spanOptions.startMs }),
            root: 'root' in parent,
          },
          context,
        ),
      );
      const own = span.spanContext();
      return {
        traceparent: formatTraceparent({
          traceId: own.traceId,
          spanId: own.spanId,
          sampled: (own.traceFlags & TraceFlags.SAMPLED) !== 0,
        }),
        end(end: SpanEnd = {}) {
          if (end.attributes) span.setAttributes(attributesOf(end.attributes));
          if (end.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: end.error });
          span.end(end.endMs);
        },
      };
    },
    // By default a stopping process waits for one export at most, and never more than 5 s.
    async shutdown(timeoutMs = Math.min(settings.timeoutMs, 5_000)) {
      let timer: NodeJS.Timeout | undefined;
      const gaveUp = new Promise<'timeout'>((done) => {
        timer = setTimeout(() => done('timeout'), timeoutMs);
        timer.unref();
      });
      const outcome = await Promise.race([provider.shutdown().then(() => 'done' as const), gaveUp]).catch(
        () => 'failed' as const,
      );
      clearTimeout(timer);
      if (outcome !== 'done') queue.discard();
    },
  };
}

function attributesOf(attributes: SpanAttributes | undefined): Attributes {
  const clean: Attributes = {};
  if (!attributes) return clean;
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== null && value !== undefined) clean[name] = value;
  }
  return clean;
}

function samplerOf(config: TracingConfig['sampler']): Sampler {
  switch (config.kind) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(config.ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.ratio) });
  }
}

type Pinned = { traceId?: string; spanId?: string };

/**
 * Random ids, except for the span being started when its ids are decided by the caller: the run's
 * root span (ids derived from the run key) and an attempt's span (sent to the consumer before it
 * was recorded). The SDK draws ids synchronously inside `startSpan`, so the pin holds for exactly
 * that span.
 */
class PinnableIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private pinned: Pinned = {};

  pinnedFor<T>(pinned: Pinned, start: () => T): T {
    this.pinned = pinned;
    try {
      return start();
    } finally {
      this.pinned = {};
    }
  }

  generateTraceId(): string {
    return this.pinned.traceId ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    return this.pinned.spanId ?? this.random.generateSpanId();
  }
}
