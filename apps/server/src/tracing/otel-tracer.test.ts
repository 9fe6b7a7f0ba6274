import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../test/support/harness.js';
import { type OtlpReceiver, refusedOtlpUrl, startOtlpReceiver } from '../../test/support/otlp-receiver.js';
import {
  attemptSpanId,
  childTraceparent,
  formatTraceparent,
  parseTraceparent,
  runSpanId,
  runTraceId,
} from '../domain/trace-context.js';
import type { SpanDrop } from '../metrics/metrics.js';
import { createOtelTracer } from './otel-tracer.js';
import type { Tracer } from './tracer.js';
import type { TracingConfig } from './tracing-config.js';

const run = { repositoryId: 1296269, runId: 30433642, runAttempt: 1 };

function settings(url: string, more: Partial<TracingConfig> = {}): TracingConfig {
  return {
    url: `${url}/v1/traces`,
    headers: {},
    compression: 'none',
    timeoutMs: 1_000,
    serviceName: 'zekt-test',
    resourceAttributes: {},
    sampler: { kind: 'parentbased_always_on', ratio: 1 },
    maxQueueSize: 2048,
    maxExportBatchSize: 512,
    scheduleDelayMs: 20,
    exportTimeoutMs: 5_000,
    ...more,
  };
}

const open: Array<{ shutdown(): Promise<void> } | OtlpReceiver> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) {
    await ('close' in thing ? thing.close() : thing.shutdown());
  }
});

function tracerFor(config: TracingConfig) {
  const counts = { exported: 0, dropped: { queue_full: 0, export_failed: 0 } as Record<SpanDrop, number> };
  const tracer = createOtelTracer({
    settings: config,
    resource: { role: 'all', instanceId: 'worker-test' },
    onExported: (count) => {
      counts.exported += count;
    },
    onDropped: (reason, count) => {
      counts.dropped[reason] += count;
    },
  });
  open.push({ shutdown: () => tracer.shutdown(2_000) });
  return { tracer, counts };
}

async function receiver(mode: 'ok' | 'hang' = 'ok') {
  const started = await startOtlpReceiver({ mode });
  open.push(started);
  return started;
}

/** The spans one provider run makes, as the components make them. */
function traceOneRun(tracer: Tracer) {
  tracer.start('zekt.run', { root: run }, { startMs: Date.now() - 60_000 }).end();
  tracer.start('zekt.message', { run }).end();
  const webhook = tracer.start('zekt.webhook', { run });
  const route = tracer.start('zekt.route', { traceparent: webhook.traceparent });
  const delivery = tracer.start('zekt.delivery', { traceparent: route.traceparent });
  delivery.end();
  route.end();
  webhook.end();
  const attempt = tracer.start(
    'zekt.dispatch',
    { traceparent: delivery.traceparent },
    { spanId: attemptSpanId('delivery-0193a6f0-c1d2-7b3e-9f4a-8c2d1e0f5a6b', 1), startMs: Date.now() },
  );
  attempt.end({ attributes: { 'http.response.status_code': 204, 'zekt.attempt.number': 1 } });
  return { webhook, route, delivery, attempt };
}

describe('the OpenTelemetry tracer', () => {
  it('puts every span of a provider run into the trace derived from its run key, under its root', async () => {
    const otlp = await receiver();
    const { tracer, counts } = tracerFor(settings(otlp.url, { headers: { 'x-api-key': 'k-123' } }));
    const { webhook, route, delivery, attempt } = traceOneRun(tracer);
    await eventually(() => (otlp.spans.length >= 6 ? true : undefined));

    const byName = new Map(otlp.spans.map((span) => [span.name, span]));
    expect([...byName.keys()].sort()).toEqual(
      ['zekt.delivery', 'zekt.dispatch', 'zekt.message', 'zekt.route', 'zekt.run', 'zekt.webhook'].sort(),
    );
    expect(new Set(otlp.spans.map((span) => span.traceId))).toEqual(new Set([runTraceId(run)]));
    expect(byName.get('zekt.run')).toMatchObject({ spanId: runSpanId(run), parentSpanId: null });
    expect(byName.get('zekt.message')?.parentSpanId).toBe(runSpanId(run));
    expect(byName.get('zekt.webhook')?.parentSpanId).toBe(runSpanId(run));
    const idOf = (traceparent: string | null) => parseTraceparent(traceparent)?.spanId;
    expect(byName.get('zekt.route')).toMatchObject({
      spanId: idOf(route.traceparent),
      parentSpanId: idOf(webhook.traceparent),
    });
    expect(byName.get('zekt.delivery')?.parentSpanId).toBe(idOf(route.traceparent));
    expect(byName.get('zekt.dispatch')).toMatchObject({
      spanId: attemptSpanId('delivery-0193a6f0-c1d2-7b3e-9f4a-8c2d1e0f5a6b', 1),
      parentSpanId: idOf(delivery.traceparent),
      attributes: { 'http.response.status_code': 204, 'zekt.attempt.number': 1 },
    });
    // The context the dispatcher sends before recording the attempt is the attempt's own.
    expect(attempt.traceparent).toBe(
      childTraceparent(
        delivery.traceparent,
        attemptSpanId('delivery-0193a6f0-c1d2-7b3e-9f4a-8c2d1e0f5a6b', 1),
      ),
    );
    expect(byName.get('zekt.run')?.resource).toMatchObject({
      'service.name': 'zekt-test',
      'service.instance.id': 'worker-test',
      'zekt.role': 'all',
    });
    expect(otlp.requests[0]?.path).toBe('/v1/traces');
    expect(otlp.requests[0]?.headers['x-api-key']).toBe('k-123');
    expect(otlp.requests[0]?.headers['content-type']).toBe('application/json');
    await eventually(() => (counts.exported >= 6 ? true : undefined));
    expect(counts.dropped).toEqual({ queue_full: 0, export_failed: 0 });
  });

  it('follows the sampling decision stored with a row, and traces nothing under a row stored untraced', async () => {
    const otlp = await receiver();
    const { tracer } = tracerFor(settings(otlp.url));
    const unsampled = formatTraceparent({ traceId: runTraceId(run), spanId: runSpanId(run), sampled: false });
    const child = tracer.start('zekt.dispatch', { traceparent: unsampled });
    child.end();
    expect(child.traceparent).toMatch(/-00$/);
    const untraced = tracer.start('zekt.confirm', { traceparent: null });
    untraced.end();
    expect(untraced.traceparent).toBeNull();
    tracer.start('zekt.complete', { traceparent: 'not a traceparent' }).end();
    tracer.start('zekt.replay', { run }).end();
    await eventually(() => (otlp.spans.length >= 1 ? true : undefined));
    await tracer.shutdown();
    expect(otlp.spans.map((span) => span.name)).toEqual(['zekt.replay']);
  });

  it('samples a run as a whole: the ratio sampler decides by the derived trace id on every process', async () => {
    const otlp = await receiver();
    const ratio = settings(otlp.url, { sampler: { kind: 'parentbased_traceidratio', ratio: 0.5 } });
    const first = tracerFor(ratio).tracer;
    const second = tracerFor(ratio).tracer;
    const runs = Array.from({ length: 40 }, (_, i) => ({ ...run, runId: 1000 + i }));
    for (const key of runs) {
      first.start('zekt.webhook', { run: key }).end();
      second.start('zekt.message', { run: key }).end();
      first.start('zekt.run', { root: key }).end();
    }
    await first.shutdown();
    await second.shutdown();
    const traces = new Map<string, string[]>();
    for (const span of otlp.spans) traces.set(span.traceId, [...(traces.get(span.traceId) ?? []), span.name]);
    // Some runs are sampled, some not, and a sampled run has all three spans: never half a trace.
    expect(traces.size).toBeGreaterThan(0);
    expect(traces.size).toBeLessThan(runs.length);
    for (const names of traces.values())
      expect(names.sort()).toEqual(['zekt.message', 'zekt.run', 'zekt.webhook']);
  });

  it('drops and counts spans when the backend hangs, and never waits for it', async () => {
    const otlp = await receiver('hang');
    const { tracer, counts } = tracerFor(
      settings(otlp.url, { timeoutMs: 300, maxQueueSize: 5, maxExportBatchSize: 2, scheduleDelayMs: 10 }),
    );
    for (let i = 0; i < 40; i++) tracer.start('zekt.message', { run: { ...run, runId: i + 1 } }).end();
    // Two exports of 2 hang, the queue holds 5: the other 31 were dropped at once.
    expect(counts.dropped.queue_full).toBe(31);
    await eventually(() => (counts.dropped.export_failed >= 4 ? true : undefined), 10_000);
    expect(counts.exported).toBe(0);
    expect(otlp.requests.length).toBeGreaterThan(0);
    // Stopping does not wait for the hanging backend beyond its bound; what is left is counted.
    await tracer.shutdown(500);
    expect(counts.dropped.queue_full + counts.dropped.export_failed).toBe(40);
  });

  it('drops and counts spans when the backend refuses connections', async () => {
    const { tracer, counts } = tracerFor(
      settings(await refusedOtlpUrl(), { timeoutMs: 300, scheduleDelayMs: 10 }),
    );
    for (let i = 0; i < 3; i++) tracer.start('zekt.webhook', { run }).end();
    await eventually(() => (counts.dropped.export_failed === 3 ? true : undefined), 10_000);
    expect(counts.exported).toBe(0);
  });
});
