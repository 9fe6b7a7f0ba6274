import type { TargetFigures } from './compare-report.js';
import type { CpuPerEvent } from './cpu-time.js';

/**
 * A target's figures over the rounds of `zekt bench --compare`. The targets are measured in turn,
 * round after round (ceiling, naive, Zekt…, then again), so that every target's rounds are spread
 * over the whole run: on a shared machine the speed drifts by a third over minutes, more than most
 * effects the bench is asked to show, and a target measured once, minutes after the one it is
 * compared with, inherits that drift as its verdict. The report gives the median of the rounds and
 * lists each round, so the spread is in plain sight.
 *
 * Throughput is the median of the rounds (the mean of the two middle ones when there is an even
 * number). A latency point is one round's, the round whose p99 is the median (the higher of the two
 * middle ones), so its p50 and p99 are figures one run really had. Losses add up; peak RSS is the
 * highest of any round. CPU per webhook is the median of the rounds, each process's on its own.
 */
export function combineRounds(rounds: readonly TargetFigures[]): TargetFigures {
  const first = rounds[0];
  if (!first) throw new Error('combineRounds needs at least one round');
  const delivered = rounds.map((r) => r.deliveredPerSecond);
  const rates = first.latency.map((point) => point.offeredRate);
  const rss = rounds.map((r) => r.peakRssBytes).filter((b): b is number => b !== null);
  return {
    key: first.key,
    name: first.name,
    ackPerSecond: median(rounds.map((r) => r.ackPerSecond)),
    deliveredPerSecond: delivered.some((d) => d === null) ? null : median(delivered as number[]),
    lost: rounds.reduce((sum, r) => sum + r.lost, 0),
    latency: rates.map((rate) => {
      const points = rounds
        .map((r) => r.latency.find((point) => point.offeredRate === rate))
        .filter((point) => point !== undefined);
      const byP99 = [...points].sort((a, b) => a.e2e.p99 - b.e2e.p99);
      const chosen = byP99[Math.floor(byP99.length / 2)] as (typeof points)[number];
      return rounds.length > 1 ? { ...chosen, p99Rounds: points.map((p) => p.e2e.p99) } : chosen;
    }),
    peakRssBytes: rss.length === rounds.length ? Math.max(...rss) : null,
    ...(rounds.some((r) => r.cpuPerEvent !== undefined)
      ? { cpuPerEvent: medianCpu(rounds.map((r) => r.cpuPerEvent ?? null)) }
      : {}),
    ...(rounds.length > 1
      ? {
          rounds: rounds.map((r) => ({
            ackPerSecond: r.ackPerSecond,
            deliveredPerSecond: r.deliveredPerSecond,
          })),
        }
      : {}),
  };
}

/** Each process's median over the rounds; null when a round could not tell. */
function medianCpu(rounds: ReadonlyArray<CpuPerEvent | null>): CpuPerEvent | null {
  if (rounds.some((r) => r === null)) return null;
  const all = rounds as CpuPerEvent[];
  const of = (pick: (c: CpuPerEvent) => number | null): number | null => {
    const values = all.map(pick);
    if (values.some((v) => v === null)) return null;
    return median(values as number[], 2);
  };
  return {
    target: of((c) => c.target),
    postgres: of((c) => c.postgres),
    bench: of((c) => c.bench) ?? 0,
    rest: of((c) => c.rest),
  };
}

/** The median, rounded to one decimal as the bench's rates are (or to `decimals`). */
export function median(values: readonly number[], decimals = 1): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const value =
    sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  const scale = 10 ** decimals;
  return Math.round(value * scale) / scale;
}
