/**
 * `zekt bench` lives in the repository's bench workspace (`@zekt/bench`), not in the zekt package: a
 * checkout has it, an installed package does not. The CLI loads it by name at run time, and this is
 * what it expects of it (bench/src/cli-contract.ts holds the workspace to it).
 */
export type BenchSchemaMode = 'none' | 'off' | 'warn' | 'enforce';

/** Of a bench run's report, what the CLI reads for its exit code; the rest it only prints. */
export interface BenchRun {
  lost: number;
  targets: Array<{ met: boolean }>;
}

export interface CompareRun {
  verdicts: Array<{ met: boolean }>;
}

/** What `zekt bench` asks of a run; the workspace's runBench takes these. */
export interface BenchOptions {
  events: number;
  /** Provider runs started per second (open loop); 0: as fast as `concurrency` allows. */
  rate: number;
  /** Runs in flight at most. */
  concurrency: number;
  payloadBytes: number;
  /** A throwaway PostgreSQL database; unset: a temporary SQLite file. */
  databaseUrl?: string | undefined;
  /** Give up waiting for deliveries after this long. */
  timeoutMs: number;
  /** `none`, or the demo service gets a schema every message matches, enforced as this (docs/performance.md). */
  schema?: BenchSchemaMode;
  /** Write a V8 CPU profile of the `zekt serve` process here (`node --cpu-prof`); unset: none. */
  profileDir?: string | undefined;
  /** Progress lines (stderr). */
  progress?: (line: string) => void;
}

/** What `zekt bench --compare` asks of a comparison; the workspace's runCompare takes these. */
export interface CompareOptions {
  /** Webhooks of the closed-loop run of each target, in each round. */
  events: number;
  /** Times each target is measured, in turn with the others; the report gives the median. */
  rounds: number;
  /** Webhooks sent to a target before each round measures it (0: none). */
  warmUp: number;
  connections: number;
  /** Offered rates of the open-loop runs (the latency chart). */
  rates: number[];
  databaseUrl?: string | undefined;
  /** Delivery records of the query scenario (0: skip it). */
  records: number;
  /** Where the chart goes (null: not written). */
  chartPath: string | null;
  /** Run only these parts (COMPARE_PARTS; undefined: all of them). */
  only?: readonly string[] | undefined;
  /** Write a V8 CPU profile of each Zekt target's `zekt serve` here (`node --cpu-prof`); unset: none. */
  profileDir?: string | undefined;
  progress: (line: string) => void;
}

export interface BenchWorkspace {
  runBench(options: BenchOptions): Promise<BenchRun>;
  formatBenchReport(report: BenchRun): string;
  readonly COMPARE_PARTS: readonly string[];
  runCompare(options: CompareOptions): Promise<CompareRun>;
  formatCompareReport(report: CompareRun): string;
}

/** The workspace's package name; a variable, so the server's build does not look for its types. */
const BENCH_PACKAGE: string = '@zekt/bench';

export const BENCH_MISSING =
  'zekt bench runs from a clone of the repository, where the bench workspace lives: npm ci && npm run bench';

/** The bench workspace, or null when this is the installed package (or the workspace is not built). */
export async function loadBenchWorkspace(): Promise<BenchWorkspace | null> {
  try {
    return (await import(BENCH_PACKAGE)) as BenchWorkspace;
  } catch (error) {
    // Only the workspace itself missing, or linked but not built (its dist/index.js): a module
    // missing further in (the simulator) is for the CLI's own message about it.
    const missing =
      (error as { code?: string } | null)?.code === 'ERR_MODULE_NOT_FOUND' &&
      /^Cannot find (package|module) '[^']*@zekt\/bench/.test((error as Error).message);
    if (missing) return null;
    throw error;
  }
}
