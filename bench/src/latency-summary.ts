/**
 * Latency distributions for `zekt bench`: nearest-rank percentiles (the value at rank ⌈p·n⌉ of the
 * sorted samples), so a reported p99 is a latency some request really had, never an interpolation.
 */
export interface LatencySummary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarizeLatencies(samples: readonly number[]): LatencySummary {
  if (samples.length === 0) return { count: 0, p50: 0, p95: 0, p99: 0, max: 0, mean: 0 };
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] as number;
  const total = sorted.reduce((sum, value) => sum + value, 0);
  return {
    count: sorted.length,
    p50: rank(0.5),
    p95: rank(0.95),
    p99: rank(0.99),
    max: sorted[sorted.length - 1] as number,
    mean: Math.round((total / sorted.length) * 10) / 10,
  };
}
