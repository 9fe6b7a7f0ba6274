import { describe, expect, it } from 'vitest';
import { type BenchMeasurements, formatBenchReport, judgeBench } from './bench-report.js';
import { summarizeLatencies } from './latency-summary.js';

describe('summarizeLatencies', () => {
  it('reports nearest-rank percentiles: latencies that really happened', () => {
    const samples = Array.from({ length: 100 }, (_, i) => 100 - i); // 1…100, unsorted
    expect(summarizeLatencies(samples)).toEqual({
      count: 100,
      p50: 50,
      p95: 95,
      p99: 99,
      max: 100,
      mean: 50.5,
    });
    expect(summarizeLatencies([7])).toEqual({ count: 1, p50: 7, p95: 7, p99: 7, max: 7, mean: 7 });
    expect(summarizeLatencies([1, 2, 3, 1000])).toMatchObject({ p50: 2, p95: 1000, p99: 1000 });
    expect(summarizeLatencies([])).toEqual({ count: 0, p50: 0, p95: 0, p99: 0, max: 0, mean: 0 });
  });
});

describe('judgeBench', () => {
  const latency = (p99: number) => ({ count: 10, p50: 1, p95: 2, p99, max: p99, mean: 1 });
  const measured = (overrides: Partial<BenchMeasurements> = {}): BenchMeasurements => ({
    store: 'sqlite',
    events: 10,
    rate: 5,
    achievedRate: 5,
    concurrency: 100,
    payloadBytes: 1024,
    schema: 'none',
    wallMs: 2000,
    acknowledged: 10,
    dispatched: 10,
    completed: 10,
    webhookAck: latency(12),
    webhookResponse: latency(3),
    dispatch: latency(20),
    completion: latency(90),
    memory: { peakRssBytes: 150 * 1024 * 1024, rssBytes: 140 * 1024 * 1024 },
    ...overrides,
  });

  it('holds the webhook acknowledgement to p99 < 50 ms, as the sender saw it', () => {
    expect(judgeBench(measured({ webhookAck: latency(49) })).targets[0]?.met).toBe(true);
    expect(judgeBench(measured({ webhookAck: latency(50) })).targets[0]?.met).toBe(false);
    // The service's own (shorter) measurement does not excuse a slow answer.
    expect(
      judgeBench(measured({ webhookAck: latency(80), webhookResponse: latency(2) })).targets[0]?.met,
    ).toBe(false);
  });

  it('counts acknowledged events that never completed as lost', () => {
    const report = judgeBench(measured({ completed: 8 }));
    expect(report.lost).toBe(2);
    expect(report.targets[1]?.met).toBe(false);
    expect(judgeBench(measured({ acknowledged: 9, completed: 9 })).targets[1]?.met).toBe(false);
    expect(judgeBench(measured()).throughputPerSecond).toBe(5);
  });

  it('prints the verdict of every target', () => {
    const text = formatBenchReport(judgeBench(measured({ webhookAck: latency(51) })));
    expect(text).toContain('MISSED  webhook acknowledgement p99: 51 ms (target < 50 ms)');
    expect(text).toContain('met     every acknowledged event delivered and completed');
    expect(text).toContain('peak RSS 150.0 MB');
  });
});
