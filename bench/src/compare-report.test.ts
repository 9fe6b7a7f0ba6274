import { describe, expect, it } from 'vitest';
import {
  type CompareMeasurements,
  formatCompareReport,
  INGESTION_KEY,
  judgeCompare,
} from './compare-report.js';
import { latencyChartSvg } from './latency-chart.js';

const latency = (p50: number, p99: number, count = 100) => ({
  count,
  p50,
  p95: p99,
  p99,
  max: p99,
  mean: p50,
});

const measured = (overrides: Partial<CompareMeasurements> = {}): CompareMeasurements => ({
  events: 3000,
  connections: 32,
  bodyBytes: 19_300,
  targets: [
    {
      key: 'ceiling',
      name: 'ceiling',
      ackPerSecond: 2000,
      deliveredPerSecond: null,
      lost: 0,
      latency: [],
      peakRssBytes: 60e6,
    },
    {
      key: 'naive',
      name: 'naive',
      ackPerSecond: 500,
      deliveredPerSecond: 500,
      lost: 0,
      latency: [],
      peakRssBytes: 100e6,
    },
    {
      key: 'zekt-durable-sqlite',
      name: 'Zekt, durable (SQLite)',
      ackPerSecond: 1000,
      deliveredPerSecond: 520,
      lost: 0,
      latency: [{ offeredRate: 500, e2e: latency(8, 20), ack: latency(2, 5) }],
      peakRssBytes: 150 * 1024 * 1024,
    },
  ],
  isolation: { slowMs: 8000, offeredRate: 100, events: 100, fast: latency(10, 90), slowDelivered: 4 },
  scaling: { deliveries: 3200, githubLatencyMs: 250, oneWorkerPerSecond: 200, twoWorkersPerSecond: 360 },
  queries: { records: 1_000_000, results: [{ name: 'health', latency: latency(5, 12) }] },
  ...overrides,
});

describe('zekt bench --compare verdicts', () => {
  it('judges ratios measured in the same run against its targets', () => {
    const report = judgeCompare(measured());
    expect(report.verdicts.every((v) => v.met)).toBe(true);
    expect(report.verdicts[0]?.actual).toBe('0.5 (1000/s of 2000/s)');
    expect(report.verdicts[1]?.actual).toBe('1.04 (520/s vs 500/s)');
  });

  it('misses a target by a hair, and reports what was not measured as missed', () => {
    const slow = measured({
      scaling: { deliveries: 3200, githubLatencyMs: 250, oneWorkerPerSecond: 200, twoWorkersPerSecond: 339 },
    });
    const missed = judgeCompare(slow)
      .verdicts.filter((v) => !v.met)
      .map((v) => v.name);
    expect(missed).toEqual(['2 workers / 1 worker on PostgreSQL']);
    const noCeiling = judgeCompare(measured({ targets: measured().targets.slice(1) }));
    expect(noCeiling.verdicts[0]).toMatchObject({ met: false, actual: 'not measured' });
    const lost = measured();
    (lost.targets[2] as { lost: number }).lost = 1;
    expect(judgeCompare(lost).verdicts.find((v) => v.name.includes('every acknowledged'))?.met).toBe(false);
  });

  it('prints the ingestion-alone figures beside the targets without judging them', () => {
    const withIngestion = measured();
    withIngestion.targets.push({
      key: INGESTION_KEY,
      name: 'Zekt, ingestion alone (SQLite, --role api)',
      ackPerSecond: 800,
      deliveredPerSecond: null,
      lost: 0,
      latency: [],
      peakRssBytes: 250 * 1024 * 1024,
    });
    const report = judgeCompare(withIngestion);
    expect(report.verdicts.map((v) => v.name).filter((name) => name.includes('ingestion alone'))).toEqual([]);
    expect(report.verdicts.every((v) => v.met)).toBe(true);
    expect(formatCompareReport(report)).toMatch(
      /Zekt, ingestion alone \(SQLite, --role api\) +800 +0\.4 +— +—/,
    );
  });

  it('prints the table, the scenarios and every verdict', () => {
    const text = formatCompareReport(judgeCompare(measured()));
    expect(text).toContain('Zekt, durable (SQLite)');
    expect(text).toContain('met     durable ingest / ceiling: 0.5');
    expect(text).toContain('scale-out on PostgreSQL');
  });

  it('draws latency against offered rate as SVG', () => {
    const svg = latencyChartSvg(
      [
        {
          name: 'a <b>',
          points: [
            { rate: 100, p99: 3 },
            { rate: 500, p99: 2500 },
          ],
        },
      ],
      't',
    );
    expect(svg).toMatch(/^<svg /);
    expect(svg).toContain('a &lt;b>');
    expect(svg).toContain('<polyline');
  });
});
