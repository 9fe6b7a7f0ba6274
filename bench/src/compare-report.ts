import type { CpuPerEvent } from './cpu-time.js';
import type { LatencySummary } from './latency-summary.js';

/**
 * What `zekt bench --compare` measured, and the verdict on its targets. Pure: the run
 * collects the numbers, this module judges and prints them. Every ratio is of two figures measured
 * in the same run, on the same machine, under the same load.
 */
export interface TargetFigures {
  key: string;
  name: string;
  /** Closed loop: webhooks answered 2xx per second, and dispatches arrived per second. */
  ackPerSecond: number;
  deliveredPerSecond: number | null;
  /** Acknowledged webhooks whose dispatch never arrived (must be 0 for Zekt). */
  lost: number;
  /** Open loop, one point per offered rate: webhook sent → dispatch arrived (the ceiling: answered). */
  latency: Array<{
    offeredRate: number;
    e2e: LatencySummary;
    ack: LatencySummary;
    /** Each round's p99 at this rate, in the order measured (absent: one round). */
    p99Rounds?: number[];
  }>;
  peakRssBytes: number | null;
  /**
   * Closed loop: milliseconds of CPU per webhook of the target, PostgreSQL, the bench and the rest
   * of the machine (cpu-time.ts); null where `/proc` cannot tell. Absent in reports of before.
   */
  cpuPerEvent?: CpuPerEvent | null;
  /** Each round's throughput, in the order measured (absent: one round); the figures above are their median (compare-rounds.ts). */
  rounds?: Array<{ ackPerSecond: number; deliveredPerSecond: number | null }>;
}

export interface CompareMeasurements {
  events: number;
  /** Times each target was measured, in turn with the others; its figures are the median (compare-rounds.ts). */
  rounds: number;
  /** Webhooks each target took before each round measured it. */
  warmUp: number;
  connections: number;
  bodyBytes: number;
  targets: TargetFigures[];
  /** The tenant-isolation scenario: one consumer's GitHub answers in `slowMs`. */
  isolation: {
    slowMs: number;
    offeredRate: number;
    events: number;
    fast: LatencySummary;
    /** Dispatches to the slow consumer that completed while the fast one was measured. */
    slowDelivered: number;
  } | null;
  /** Per store: durable Zekt taking webhooks faster than GitHub takes their dispatches. */
  backlog: Array<{
    store: string;
    events: number;
    githubLatencyMs: number;
    /** Deliveries routed but not yet delivered when the last webhook was answered (estimated). */
    backlogAtLastAck: number;
    lost: number;
    peakRssBytes: number | null;
  }> | null;
  /** Backlog drained by 1 and by 2 worker processes on PostgreSQL (null without a database URL). */
  scaling: {
    deliveries: number;
    githubLatencyMs: number;
    /** Medians of the rounds. */
    oneWorkerPerSecond: number;
    twoWorkersPerSecond: number;
    /** Each round's drains, 1 worker then 2, in the order measured (absent: one round). */
    rounds?: Array<{ oneWorkerPerSecond: number; twoWorkersPerSecond: number }>;
  } | null;
  /** Management queries over a store holding `records` delivery records. */
  queries: { records: number; results: Array<{ name: string; latency: LatencySummary }> } | null;
}

export interface Verdict {
  name: string;
  limit: string;
  actual: string;
  met: boolean;
}

export interface CompareReport extends CompareMeasurements {
  verdicts: Verdict[];
}

/**
 * The targets, each judged on figures of one run. Ingestion is the API role's (`--role api`): what
 * a durable acknowledgement costs, without routing and dispatch on the same event loop.
 */
export const COMPARE_TARGETS = {
  ingestOfCeiling: 0.5,
  /** Durable delivered ÷ the naive router, per store. */
  deliveredOfNaive: { sqlite: 1.2, postgres: 1.0 },
  e2eP99AtRate: { rate: 500, ms: 25 },
  isolationP99Ms: 1000,
  twoWorkerScaling: 1.8,
  peakRssBytes: 200 * 1024 * 1024,
  queryP99Ms: 50,
} as const;

/** Unrounded: a verdict never passes because of rounding. */
const exactRatio = (a: number | null | undefined, b: number | null | undefined): number | null =>
  a == null || b == null || b === 0 ? null : a / b;
/** For printing. */
const ratio = (a: number | null | undefined, b: number | null | undefined): number | null => {
  const exact = exactRatio(a, b);
  return exact === null ? null : Math.round(exact * 100) / 100;
};

/** Met when `rate / base` is at least `min`; not measured when either is missing (or `base` is 0). */
function ratioVerdict(
  name: string,
  min: number,
  rate: number | null | undefined,
  word: string,
  base: number | null | undefined,
): Verdict {
  const printed = ratio(rate, base);
  return {
    name,
    limit: `≥ ${min}`,
    actual: printed === null ? 'not measured' : `${printed} (${rate}/s ${word} ${base}/s)`,
    met: printed !== null && (exactRatio(rate, base) ?? 0) >= min,
  };
}

/** The durable Zekt targets, on each store. */
export const DURABLE_KEY = 'zekt-durable-sqlite';
export const DURABLE_POSTGRES_KEY = 'zekt-durable-postgres';
/** Zekt's API process alone (`--role api`: stores each event durably; routing and dispatch are the workers'), on each store. */
export const INGESTION_KEY = 'ingestion-sqlite';
export const INGESTION_POSTGRES_KEY = 'ingestion-postgres';
/** The least a durable router does (bare-durable-router.ts): a reference, judged against no target. */
export const BARE_DURABLE_KEY = 'bare-durable';

export function judgeCompare(measured: CompareMeasurements): CompareReport {
  const t = COMPARE_TARGETS;
  const byKey = new Map(measured.targets.map((target) => [target.key, target]));
  const ceiling = byKey.get('ceiling');
  const naive = byKey.get('naive');
  const verdicts: Verdict[] = [];
  const stores = [
    { label: 'SQLite', durable: DURABLE_KEY, ingestion: INGESTION_KEY, ofNaive: t.deliveredOfNaive.sqlite },
    {
      label: 'PostgreSQL',
      durable: DURABLE_POSTGRES_KEY,
      ingestion: INGESTION_POSTGRES_KEY,
      ofNaive: t.deliveredOfNaive.postgres,
    },
  ];
  for (const store of stores) {
    // PostgreSQL's are judged when the run had a database (a target it ran, or `--database-url`).
    if (store.label === 'PostgreSQL' && !byKey.has(store.durable) && !byKey.has(store.ingestion)) continue;
    const durable = byKey.get(store.durable);
    verdicts.push(
      ratioVerdict(
        `durable ingest of the API role (${store.label}) / ceiling`,
        t.ingestOfCeiling,
        byKey.get(store.ingestion)?.ackPerSecond,
        'of',
        ceiling?.ackPerSecond,
      ),
      ratioVerdict(
        `durable delivered end to end (${store.label}) / naive router`,
        store.ofNaive,
        durable?.deliveredPerSecond,
        'vs',
        naive?.deliveredPerSecond,
      ),
    );
    const atRate = durable?.latency.find((point) => point.offeredRate === t.e2eP99AtRate.rate);
    verdicts.push({
      name: `durable e2e p99 at ${t.e2eP99AtRate.rate} events/s offered (${store.label})`,
      limit: `≤ ${t.e2eP99AtRate.ms} ms`,
      actual: atRate ? `${atRate.e2e.p99} ms (p50 ${atRate.e2e.p50} ms)` : 'not measured',
      met: atRate !== undefined && atRate.e2e.count > 0 && atRate.e2e.p99 <= t.e2eP99AtRate.ms,
    });
  }
  for (const target of measured.targets.filter(
    (x) => x.key.startsWith('zekt') || x.key.startsWith('ingestion'),
  )) {
    // The API role alone routes nothing: none of its events is delivered, by design.
    if (target.key.startsWith('zekt'))
      verdicts.push({
        name: `${target.name}: every acknowledged event delivered`,
        limit: '0 lost',
        actual: `${target.lost} lost`,
        met: target.lost === 0,
      });
    verdicts.push({
      name: `${target.name}: peak RSS`,
      limit: `≤ ${mb(t.peakRssBytes)}`,
      actual: mb(target.peakRssBytes),
      met: target.peakRssBytes !== null && target.peakRssBytes <= t.peakRssBytes,
    });
  }
  if (measured.isolation) {
    verdicts.push({
      name: `other consumer's p99 webhook → dispatch while one consumer's GitHub answers in ${measured.isolation.slowMs / 1000} s`,
      limit: `< ${t.isolationP99Ms} ms`,
      actual: `${measured.isolation.fast.p99} ms (n=${measured.isolation.fast.count})`,
      met:
        measured.isolation.fast.count === measured.isolation.events &&
        measured.isolation.fast.p99 < t.isolationP99Ms,
    });
  }
  for (const b of measured.backlog ?? []) {
    verdicts.push({
      name: `Zekt, durable (${b.store}), with a backlog: peak RSS`,
      limit: `≤ ${mb(t.peakRssBytes)}`,
      actual: `${mb(b.peakRssBytes)} (about ${b.backlogAtLastAck} deliveries waiting at the peak)`,
      met: b.peakRssBytes !== null && b.peakRssBytes <= t.peakRssBytes,
    });
    verdicts.push({
      name: `Zekt, durable (${b.store}), with a backlog: every acknowledged event delivered`,
      limit: '0 lost',
      actual: `${b.lost} lost`,
      met: b.lost === 0,
    });
  }
  if (measured.scaling) {
    const scaling = ratio(measured.scaling.twoWorkersPerSecond, measured.scaling.oneWorkerPerSecond);
    verdicts.push({
      name: '2 workers / 1 worker on PostgreSQL',
      limit: `≥ ${t.twoWorkerScaling}`,
      actual: `${scaling} (${measured.scaling.twoWorkersPerSecond}/s vs ${measured.scaling.oneWorkerPerSecond}/s)`,
      met:
        scaling !== null &&
        (exactRatio(measured.scaling.twoWorkersPerSecond, measured.scaling.oneWorkerPerSecond) ?? 0) >=
          t.twoWorkerScaling,
    });
  }
  if (measured.queries) {
    for (const query of measured.queries.results) {
      verdicts.push({
        name: `${query.name} with ${measured.queries.records.toLocaleString('en')} delivery records: p99`,
        limit: `≤ ${t.queryP99Ms} ms`,
        actual: `${query.latency.p99} ms`,
        met: query.latency.count > 0 && query.latency.p99 <= t.queryP99Ms,
      });
    }
  }
  return { ...measured, verdicts };
}

export function formatCompareReport(report: CompareReport): string {
  const byKey = new Map(report.targets.map((target) => [target.key, target]));
  const ceiling = byKey.get('ceiling');
  const naive = byKey.get('naive');
  const lines = [
    `zekt bench --compare: ${report.events} signed workflow_run.completed webhooks of ${(report.bodyBytes / 1024).toFixed(1)} KB, ${report.connections} keep-alive connections, one subscription; Zekt with pacing off and up to ${report.connections} calls in flight to the consumer's installation, as the naive router; each target warmed up with ${report.warmUp} first; every figure below from this one run${report.rounds > 1 ? `, each target measured ${report.rounds} times in turn with the others: the medians` : ''}`,
    '',
    `${'target'.padEnd(46)} ${'ack/s'.padStart(8)} ${'÷ceiling'.padStart(9)} ${'delivered/s'.padStart(12)} ${'÷naive'.padStart(7)} ${'peak RSS'.padStart(10)}`,
  ];
  for (const target of report.targets) {
    lines.push(
      `${target.name.padEnd(46)} ${String(target.ackPerSecond).padStart(8)} ${String(ratio(target.ackPerSecond, ceiling?.ackPerSecond) ?? '—').padStart(9)} ${String(target.deliveredPerSecond ?? '—').padStart(12)} ${String(ratio(target.deliveredPerSecond, naive?.deliveredPerSecond) ?? '—').padStart(7)} ${mb(target.peakRssBytes).padStart(10)}`,
    );
  }
  const bare = byKey.get(BARE_DURABLE_KEY);
  const durables: Array<[string, TargetFigures | undefined]> = [
    ['SQLite', byKey.get(DURABLE_KEY)],
    ['PostgreSQL', byKey.get(DURABLE_POSTGRES_KEY)],
  ];
  const ofBare = durables.flatMap(([label, target]) => {
    const value = ratio(target?.deliveredPerSecond, bare?.deliveredPerSecond);
    return value === null ? [] : [`${label} ${value}`];
  });
  if (ofBare.length > 0) {
    lines.push(
      '',
      `Zekt durable delivered / the bare durable router (what Zekt costs beyond durability itself; no target): ${ofBare.join(', ')}`,
    );
  }
  const withCpu = report.targets.filter((target) => target.cpuPerEvent);
  if (withCpu.length > 0) {
    lines.push(
      '',
      'CPU per webhook in the closed loop, ms (the machine is shared: the bench is the load generator and the GitHub simulator)',
      `${'target'.padEnd(46)} ${['target', 'PostgreSQL', 'bench', 'rest', 'machine'].map((h) => h.padStart(11)).join(' ')}`,
    );
    for (const target of withCpu) {
      const c = target.cpuPerEvent as CpuPerEvent;
      const parts = [c.target, c.postgres, c.bench, c.rest];
      const machine = parts.some((v) => v === null)
        ? null
        : Math.round((parts as number[]).reduce((a, b) => a + b, 0) * 100) / 100;
      lines.push(
        `${target.name.padEnd(46)} ${[...parts, machine].map((v) => (v === null ? '—' : v.toFixed(2)).padStart(11)).join(' ')}`,
      );
    }
  }
  const judgedRate = COMPARE_TARGETS.e2eP99AtRate.rate;
  if (report.targets.some((target) => target.rounds)) {
    lines.push('', `each round, in the order measured: ack/s | delivered/s | e2e p99 ms at ${judgedRate}/s`);
    for (const target of report.targets.filter((x) => x.rounds)) {
      const rounds = target.rounds ?? [];
      const p99s = target.latency.find((p) => p.offeredRate === judgedRate)?.p99Rounds;
      const cells = [
        rounds.map((r) => r.ackPerSecond).join(' · '),
        rounds.map((r) => r.deliveredPerSecond ?? '—').join(' · '),
        p99s ? p99s.join(' · ') : '—',
      ];
      lines.push(`${target.name.padEnd(46)} ${cells.join(' | ')}`);
    }
  }
  lines.push(
    '',
    'latency at offered rates (open loop): webhook sent → dispatch arrived at GitHub, p50 / p99 ms',
  );
  const rates = [...new Set(report.targets.flatMap((target) => target.latency.map((p) => p.offeredRate)))];
  lines.push(`${'target'.padEnd(46)} ${rates.map((rate) => `${rate}/s`.padStart(14)).join(' ')}`);
  for (const target of report.targets) {
    const cells = rates.map((rate) => {
      const point = target.latency.find((p) => p.offeredRate === rate);
      return (point ? `${point.e2e.p50} / ${point.e2e.p99}` : '—').padStart(14);
    });
    lines.push(`${target.name.padEnd(46)} ${cells.join(' ')}`);
  }
  if (report.isolation) {
    const i = report.isolation;
    lines.push(
      '',
      `isolation: ${i.events} events at ${i.offeredRate}/s to two consumers, one whose GitHub answers in ${i.slowMs / 1000} s: the other's webhook → dispatch p50 ${i.fast.p50} ms, p99 ${i.fast.p99} ms, max ${i.fast.max} ms (${i.fast.count} delivered; ${i.slowDelivered} of the slow one's meanwhile)`,
    );
  }
  for (const b of report.backlog ?? []) {
    lines.push(
      '',
      `backlog (${b.store}): ${b.events} webhooks, closed loop, GitHub answering each dispatch in ${b.githubLatencyMs} ms: about ${b.backlogAtLastAck} deliveries waiting when the last webhook was answered, ${b.lost} lost, peak RSS ${mb(b.peakRssBytes)}`,
    );
  }
  if (report.scaling) {
    const s = report.scaling;
    lines.push(
      '',
      `scale-out on PostgreSQL: a backlog of ${s.deliveries} deliveries, GitHub answering in ${s.githubLatencyMs} ms, first to last dispatch: 1 worker ${s.oneWorkerPerSecond}/s, 2 workers ${s.twoWorkersPerSecond}/s${s.rounds ? ` (medians of ${s.rounds.map((r) => `${r.oneWorkerPerSecond} → ${r.twoWorkersPerSecond}`).join(', ')})` : ''}`,
    );
  }
  if (report.queries) {
    lines.push(
      '',
      `queries over ${report.queries.records.toLocaleString('en')} delivery records (through the API):`,
    );
    for (const q of report.queries.results) {
      lines.push(
        `  ${q.name.padEnd(44)} p50 ${q.latency.p50} ms  p99 ${q.latency.p99} ms  (n=${q.latency.count})`,
      );
    }
  }
  lines.push('', 'targets');
  for (const v of report.verdicts)
    lines.push(`  ${v.met ? 'met   ' : 'MISSED'}  ${v.name}: ${v.actual} (target ${v.limit})`);
  lines.push('');
  return lines.join('\n');
}

function mb(bytes: number | null): string {
  return bytes === null ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}
