import { describe, expect, it } from 'vitest';
import {
  BARE_DURABLE_KEY,
  type CompareMeasurements,
  DURABLE_POSTGRES_KEY,
  formatCompareReport,
  INGESTION_KEY,
  INGESTION_POSTGRES_KEY,
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
  rounds: 1,
  warmUp: 3000,
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
      deliveredPerSecond: 620,
      lost: 0,
      latency: [{ offeredRate: 500, e2e: latency(8, 20), ack: latency(2, 5) }],
      peakRssBytes: 150 * 1024 * 1024,
    },
    {
      key: INGESTION_KEY,
      name: 'Zekt, ingestion alone (SQLite, --role api)',
      ackPerSecond: 1000,
      deliveredPerSecond: null,
      // The API role routes nothing: its events are never delivered, and that is not judged.
      lost: 3000,
      latency: [],
      peakRssBytes: 120 * 1024 * 1024,
    },
  ],
  isolation: { slowMs: 8000, offeredRate: 100, events: 100, fast: latency(10, 90), slowDelivered: 4 },
  backlog: [
    {
      store: 'SQLite',
      events: 6000,
      githubLatencyMs: 100,
      backlogAtLastAck: 4200,
      lost: 0,
      peakRssBytes: 190 * 1024 * 1024,
    },
  ],
  scaling: { deliveries: 3200, githubLatencyMs: 250, oneWorkerPerSecond: 200, twoWorkersPerSecond: 360 },
  queries: { records: 1_000_000, results: [{ name: 'health', latency: latency(5, 12) }] },
  ...overrides,
});

describe('zekt bench --compare verdicts', () => {
  it('judges ratios measured in the same run against its targets', () => {
    const report = judgeCompare(measured());
    expect(report.verdicts.every((v) => v.met)).toBe(true);
    expect(report.verdicts[0]).toMatchObject({
      name: 'durable ingest of the API role (SQLite) / ceiling',
      actual: '0.5 (1000/s of 2000/s)',
    });
    expect(report.verdicts[1]).toMatchObject({
      name: 'durable delivered end to end (SQLite) / naive router',
      actual: '1.24 (620/s vs 500/s)',
      limit: '≥ 1.2',
    });
    // Without a PostgreSQL target, PostgreSQL's verdicts are not printed.
    expect(report.verdicts.some((v) => v.name.includes('PostgreSQL)'))).toBe(false);
  });

  it('misses a target by a hair, and reports what was not measured as missed', () => {
    const slow = measured({
      scaling: { deliveries: 3200, githubLatencyMs: 250, oneWorkerPerSecond: 200, twoWorkersPerSecond: 359 },
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

  it('judges the peak RSS with a backlog, and a delivery lost there', () => {
    const heavy = measured({
      backlog: [
        {
          store: 'SQLite',
          events: 6000,
          githubLatencyMs: 100,
          backlogAtLastAck: 4200,
          lost: 1,
          peakRssBytes: 201 * 1024 * 1024,
        },
      ],
    });
    const report = judgeCompare(heavy);
    expect(report.verdicts.filter((v) => !v.met).map((v) => v.name)).toEqual([
      'Zekt, durable (SQLite), with a backlog: peak RSS',
      'Zekt, durable (SQLite), with a backlog: every acknowledged event delivered',
    ]);
    expect(formatCompareReport(report)).toContain(
      'backlog (SQLite): 6000 webhooks, closed loop, GitHub answering each dispatch in 100 ms: about 4200 deliveries waiting when the last webhook was answered, 1 lost, peak RSS 201 MB',
    );
  });

  it("judges PostgreSQL's targets apart, by its own bar", () => {
    const withPostgres = measured();
    withPostgres.targets.push(
      {
        key: DURABLE_POSTGRES_KEY,
        name: 'Zekt, durable (PostgreSQL)',
        ackPerSecond: 600,
        deliveredPerSecond: 510,
        lost: 0,
        latency: [{ offeredRate: 500, e2e: latency(10, 26), ack: latency(2, 5) }],
        peakRssBytes: 201 * 1024 * 1024,
      },
      {
        key: INGESTION_POSTGRES_KEY,
        name: 'Zekt, ingestion alone (PostgreSQL, --role api)',
        ackPerSecond: 999,
        deliveredPerSecond: null,
        lost: 0,
        latency: [],
        peakRssBytes: 120 * 1024 * 1024,
      },
    );
    const report = judgeCompare(withPostgres);
    const missed = report.verdicts.filter((v) => !v.met).map((v) => v.name);
    // 1.02 of the naive router meets PostgreSQL's bar (1.0), not SQLite's (1.2).
    expect(missed).toEqual([
      'durable ingest of the API role (PostgreSQL) / ceiling',
      'durable e2e p99 at 500 events/s offered (PostgreSQL)',
      'Zekt, durable (PostgreSQL): peak RSS',
    ]);
    expect(formatCompareReport(report)).toMatch(
      /Zekt, ingestion alone \(PostgreSQL, --role api\) +999 +0\.5 +— +—/,
    );
  });

  it('judges scale-out on the medians of its rounds, and prints each round', () => {
    const report = judgeCompare(
      measured({
        scaling: {
          deliveries: 3200,
          githubLatencyMs: 250,
          oneWorkerPerSecond: 245.4,
          twoWorkersPerSecond: 478.3,
          rounds: [
            { oneWorkerPerSecond: 239.4, twoWorkersPerSecond: 459 },
            { oneWorkerPerSecond: 247.5, twoWorkersPerSecond: 478.3 },
            { oneWorkerPerSecond: 245.4, twoWorkersPerSecond: 420.3 },
          ],
        },
      }),
    );
    expect(report.verdicts.find((v) => v.name === '2 workers / 1 worker on PostgreSQL')).toMatchObject({
      actual: '1.95 (478.3/s vs 245.4/s)',
      met: true,
    });
    expect(formatCompareReport(report)).toContain(
      '1 worker 245.4/s, 2 workers 478.3/s (medians of 239.4 → 459, 247.5 → 478.3, 245.4 → 420.3)',
    );
  });

  it('prints the table, the scenarios and every verdict', () => {
    const text = formatCompareReport(judgeCompare(measured()));
    expect(text).toContain('Zekt, durable (SQLite)');
    expect(text).toContain('met     durable ingest of the API role (SQLite) / ceiling: 0.5');
    expect(text).toContain('scale-out on PostgreSQL');
  });

  it('prints where the CPU went per webhook, for the targets whose closed loop read it', () => {
    const base = measured();
    const targets = base.targets.map((t) =>
      t.key === 'naive'
        ? { ...t, cpuPerEvent: { target: 1.43, postgres: 0, bench: 1.01, rest: 0.06 } }
        : t.key === 'zekt-durable-sqlite'
          ? { ...t, cpuPerEvent: { target: 1.73, postgres: null, bench: 1.04, rest: 0.1 } }
          : t,
    );
    const lines = formatCompareReport(judgeCompare({ ...base, targets })).split('\n');
    const header = lines.findIndex((l) => l.startsWith('CPU per webhook in the closed loop, ms'));
    expect(header).toBeGreaterThan(0);
    expect(lines.slice(header + 1, header + 4).map((l) => l.trim().split(/\s{2,}/))).toEqual([
      ['target', 'target', 'PostgreSQL', 'bench', 'rest', 'machine'],
      ['naive', '1.43', '0.00', '1.01', '0.06', '2.50'],
      // Without PostgreSQL's figure the machine's total is not known either.
      ['Zekt, durable (SQLite)', '1.73', '—', '1.04', '0.10', '—'],
    ]);
    // A report whose targets read no CPU prints no table.
    expect(formatCompareReport(judgeCompare(base))).not.toContain('CPU per webhook');
  });

  it('prints Zekt durable against the bare durable router when both ran, and judges nothing by it', () => {
    const base = measured();
    const bare = {
      key: BARE_DURABLE_KEY,
      name: 'bare durable router (SQLite, no retries)',
      ackPerSecond: 1240,
      deliveredPerSecond: 1240,
      lost: 0,
      latency: [],
      peakRssBytes: 90e6,
    };
    const withBare = judgeCompare({ ...base, targets: [...base.targets, bare] });
    expect(formatCompareReport(withBare)).toContain(
      'Zekt durable delivered / the bare durable router (what Zekt costs beyond durability itself; no target): SQLite 0.5',
    );
    expect(withBare.verdicts).toEqual(judgeCompare(base).verdicts);
    expect(formatCompareReport(judgeCompare(base))).not.toContain('bare durable router');
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
