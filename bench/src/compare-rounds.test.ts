import { describe, expect, it } from 'vitest';
import { formatCompareReport, judgeCompare, type TargetFigures } from './compare-report.js';
import { combineRounds } from './compare-rounds.js';

const latency = (p50: number, p99: number) => ({ count: 2000, p50, p95: p99, p99, max: p99, mean: p50 });

const round = (
  ack: number,
  delivered: number | null,
  p99: number,
  rss: number | null = 150e6,
): TargetFigures => ({
  key: 'zekt-durable-sqlite',
  name: 'Zekt, durable (SQLite)',
  ackPerSecond: ack,
  deliveredPerSecond: delivered,
  lost: 0,
  latency: [
    { offeredRate: 100, e2e: latency(3, 9), ack: latency(1, 2) },
    { offeredRate: 500, e2e: latency(p99 / 4, p99), ack: latency(2, 5) },
  ],
  peakRssBytes: rss,
});

describe('a target measured in rounds', () => {
  it('takes the median throughput, the median round of each latency point, all losses and the highest RSS', () => {
    const rounds = [round(700, 690, 41, 180e6), round(560, 552, 26, 195e6), round(770, 760, 30, 186e6)];
    rounds[1] = { ...(rounds[1] as TargetFigures), lost: 2 };
    const combined = combineRounds(rounds);
    expect(combined).toMatchObject({
      ackPerSecond: 700,
      deliveredPerSecond: 690,
      lost: 2,
      peakRssBytes: 195e6,
      rounds: [
        { ackPerSecond: 700, deliveredPerSecond: 690 },
        { ackPerSecond: 560, deliveredPerSecond: 552 },
        { ackPerSecond: 770, deliveredPerSecond: 760 },
      ],
    });
    // The 500/s point is the round whose p99 is the median (30 ms), p50 included: one round's figures.
    const at500 = combined.latency.find((p) => p.offeredRate === 500);
    expect(at500?.e2e).toMatchObject({ p50: 7.5, p99: 30 });
    expect(at500?.p99Rounds).toEqual([41, 26, 30]);
  });

  it("takes each process's median CPU per webhook, and none when a round could not tell", () => {
    const cpu = (target: number, postgres: number | null, bench: number, rest: number | null) => ({
      target,
      postgres,
      bench,
      rest,
    });
    const rounds = [
      { ...round(700, 690, 41), cpuPerEvent: cpu(1.5, 0.7, 1.0, 0.1) },
      { ...round(560, 552, 26), cpuPerEvent: cpu(1.8, 0.9, 1.2, 0.3) },
      { ...round(770, 760, 30), cpuPerEvent: cpu(1.4, 0.8, 0.9, 0.2) },
    ];
    // Each column on its own: the medians of one column need not come from the same round.
    expect(combineRounds(rounds).cpuPerEvent).toEqual(cpu(1.5, 0.8, 1.0, 0.2));
    expect(combineRounds(rounds.slice(0, 2)).cpuPerEvent).toEqual(cpu(1.65, 0.8, 1.1, 0.2));
    const unread = rounds.map((r, i) => (i === 1 ? { ...r, cpuPerEvent: cpu(1.8, null, 1.2, 0.3) } : r));
    expect(combineRounds(unread).cpuPerEvent?.postgres).toBeNull();
    expect(combineRounds([{ ...round(700, 690, 41), cpuPerEvent: null }, ...rounds]).cpuPerEvent).toBeNull();
    // Figures of a report from before CPU was read carry none.
    expect(combineRounds([round(700, 690, 41)])).not.toHaveProperty('cpuPerEvent');
  });

  it('averages the two middle rounds of an even number, and takes the higher middle latency', () => {
    const combined = combineRounds([
      round(600, 590, 20),
      round(700, 695, 40),
      round(650, 640, 30),
      round(500, 480, 90),
    ]);
    expect(combined.ackPerSecond).toBe(625);
    expect(combined.deliveredPerSecond).toBe(615);
    expect(combined.latency.find((p) => p.offeredRate === 500)?.e2e.p99).toBe(40);
  });

  it('keeps one round as it was, and a target that delivers nothing as not delivering', () => {
    const once = round(700, 690, 41);
    expect(combineRounds([once])).toEqual(once);
    const ingest = combineRounds([round(1500, null, 0), round(1600, null, 0)]);
    expect(ingest.deliveredPerSecond).toBeNull();
    expect(ingest.ackPerSecond).toBe(1550);
    expect(combineRounds([round(1, 1, 1, null), round(1, 1, 1)]).peakRssBytes).toBeNull();
  });

  it('prints each round beside the medians the verdicts judge', () => {
    const durable = combineRounds([round(700, 690, 41), round(560, 552, 26), round(770, 760, 30)]);
    const naive = combineRounds([
      { ...round(800, 790, 12), key: 'naive', name: 'naive' },
      { ...round(760, 750, 11), key: 'naive', name: 'naive' },
      { ...round(860, 850, 18), key: 'naive', name: 'naive' },
    ]);
    const report = judgeCompare({
      events: 3000,
      rounds: 3,
      warmUp: 3000,
      connections: 32,
      bodyBytes: 19_300,
      targets: [naive, durable],
      isolation: null,
      backlog: null,
      scaling: null,
      queries: null,
    });
    expect(
      report.verdicts.find((v) => v.name.startsWith('durable delivered end to end (SQLite)')),
    ).toMatchObject({
      actual: '0.87 (690/s vs 790/s)',
      met: false,
    });
    expect(report.verdicts.find((v) => v.name.startsWith('durable e2e p99'))).toMatchObject({
      actual: '30 ms (p50 7.5 ms)',
    });
    const text = formatCompareReport(report);
    expect(text).toContain(
      'each target warmed up with 3000 first; every figure below from this one run, each target measured 3 times in turn with the others: the medians',
    );
    expect(text).toMatch(/Zekt, durable \(SQLite\) +700 · 560 · 770 \| 690 · 552 · 760 \| 41 · 26 · 30/);
  });
});
