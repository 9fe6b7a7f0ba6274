import { register } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parsePrometheusText, sampleValue } from '../../test/support/prometheus-text.js';
import type { QueueStats } from '../store/queue-stats.js';
import { createPrometheusMetrics } from './prometheus.js';

const stats = (pending: number): QueueStats => ({
  byDispatchState: { pending, accepted: 2, failed: 1 },
  awaitingStart: 1,
  dueNow: pending,
  oldestDueAt: pending > 0 ? 1_000 : null,
});

describe('Prometheus metrics', () => {
  it('reads the queue gauges once per cache period, however many scrapes come in', async () => {
    let now = 10_000;
    const readings: number[] = [];
    let pending = 3;
    const metrics = createPrometheusMetrics({
      queueStats: async (at) => {
        readings.push(at);
        return stats(pending);
      },
      now: () => now,
      queueStatsCacheMs: 5_000,
    });
    const scrapes = await Promise.all(Array.from({ length: 5 }, () => metrics.scrape()));
    expect(readings).toEqual([10_000]);
    const first = parsePrometheusText(scrapes[0]!.body);
    expect(sampleValue(first, 'zekt_deliveries', { state: 'pending' })).toBe(3);
    expect(sampleValue(first, 'zekt_deliveries', { state: 'awaiting_start' })).toBe(1);
    expect(sampleValue(first, 'zekt_queue_depth')).toBe(3);
    expect(sampleValue(first, 'zekt_queue_oldest_due_age_seconds')).toBe(9);

    pending = 0;
    now += 4_999;
    await metrics.scrape();
    expect(readings).toHaveLength(1);
    now += 1;
    const fresh = parsePrometheusText((await metrics.scrape()).body);
    expect(readings).toEqual([10_000, 15_000]);
    expect(sampleValue(fresh, 'zekt_queue_depth')).toBe(0);
    expect(sampleValue(fresh, 'zekt_queue_oldest_due_age_seconds')).toBe(0);
  });

  it('answers a scrape while the store is down, the queue gauges unknown, and asks again next time', async () => {
    let calls = 0;
    const metrics = createPrometheusMetrics({
      queueStats: async () => {
        calls++;
        if (calls === 1) throw new Error('the database does not answer');
        return stats(0);
      },
      now: () => 0,
    });
    const down = parsePrometheusText((await metrics.scrape()).body);
    expect(sampleValue(down, 'zekt_deliveries', { state: 'accepted' })).toBeNaN();
    expect(sampleValue(down, 'zekt_queue_depth')).toBeNaN();
    expect(sampleValue(down, 'zekt_queue_oldest_due_age_seconds')).toBeNaN();
    expect(sampleValue(down, 'zekt_store_errors_total', { category: 'unavailable' })).toBe(0);
    const text = (await metrics.scrape()).body;
    expect(calls).toBe(2);
    expect(sampleValue(parsePrometheusText(text), 'zekt_deliveries', { state: 'accepted' })).toBe(2);
  });

  it('keeps each instance on its own registry, never the global one, with every series from 0', async () => {
    const a = createPrometheusMetrics({ queueStats: null, now: () => 0 });
    const b = createPrometheusMetrics({ queueStats: null, now: () => 0 });
    a.webhookReceived('accepted');
    a.webhookReceived('accepted');
    a.dispatchAttempted('rate_limited');
    a.dispatchAttempted(null);
    a.retentionDeleted('messages', 7);
    a.storeFailed('unavailable');
    a.endToEnd(1_500);
    a.ingestAnswered('message', 4);
    const textA = parsePrometheusText((await a.scrape()).body);
    const textB = parsePrometheusText((await b.scrape()).body);
    expect(sampleValue(textA, 'zekt_webhooks_received_total', { outcome: 'accepted' })).toBe(2);
    expect(sampleValue(textB, 'zekt_webhooks_received_total', { outcome: 'accepted' })).toBe(0);
    expect(sampleValue(textB, 'zekt_webhooks_received_total', { outcome: 'bad_signature' })).toBe(0);
    expect(
      sampleValue(textA, 'zekt_dispatch_attempts_total', { result: 'failed', category: 'rate_limited' }),
    ).toBe(1);
    expect(sampleValue(textA, 'zekt_dispatch_attempts_total', { result: 'accepted', category: 'none' })).toBe(
      1,
    );
    expect(sampleValue(textA, 'zekt_retention_deleted_rows_total', { table: 'messages' })).toBe(7);
    expect(sampleValue(textA, 'zekt_store_errors_total', { category: 'unavailable' })).toBe(1);
    expect(sampleValue(textA, 'zekt_end_to_end_latency_seconds_sum')).toBe(1.5);
    expect(sampleValue(textA, 'zekt_end_to_end_latency_seconds_bucket', { le: '2.5' })).toBe(1);
    expect(sampleValue(textA, 'zekt_end_to_end_latency_seconds_bucket', { le: '1' })).toBe(0);
    expect(sampleValue(textA, 'zekt_ingest_latency_seconds_count', { endpoint: 'message' })).toBe(1);
    expect(sampleValue(textA, 'zekt_ingest_latency_seconds_count', { endpoint: 'webhook' })).toBe(0);
    // The runtime's metrics come once per scrape, from the process, beside the instance's own.
    expect(textA.samples.filter((s) => s.name === 'process_cpu_user_seconds_total')).toHaveLength(1);
    expect(textB.types.get('nodejs_heap_size_used_bytes')).toBe('gauge');
    // Without a store to read, no queue gauges.
    expect(textA.samples.some((s) => s.name === 'zekt_queue_depth')).toBe(false);
    expect(await register.metrics()).not.toContain('zekt_');
  });
});

describe('the Prometheus text reader', () => {
  it('reads labels with escapes, special values and types', () => {
    const text = [
      '# HELP x_total a counter',
      '# TYPE x_total counter',
      'x_total{path="a\\"b\\\\c",le="+Inf"} 3',
      'y NaN',
      'z +Inf 1700000000000',
    ].join('\n');
    const exposition = parsePrometheusText(text);
    expect(exposition.types.get('x_total')).toBe('counter');
    expect(sampleValue(exposition, 'x_total', { path: 'a"b\\c' })).toBe(3);
    expect(sampleValue(exposition, 'y')).toBeNaN();
    expect(sampleValue(exposition, 'z')).toBe(Number.POSITIVE_INFINITY);
    expect(() => parsePrometheusText('not a sample line at all')).toThrow('line 1');
    expect(() => sampleValue(exposition, 'missing')).toThrow('0 samples');
  });
});
