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

export interface BenchWorkspace {
  runBench(options: {
    events: number;
    rate: number;
    concurrency: number;
    payloadBytes: number;
    databaseUrl?: string | undefined;
    timeoutMs: number;
    schema?: BenchSchemaMode;
    profileDir?: string | undefined;
    progress?: (line: string) => void;
  }): Promise<BenchRun>;
  formatBenchReport(report: BenchRun): string;
  readonly COMPARE_PARTS: readonly string[];
  runCompare(options: {
    events: number;
    connections: number;
    rates: number[];
    databaseUrl?: string | undefined;
    records: number;
    chartPath: string | null;
    only?: readonly string[] | undefined;
    profileDir?: string | undefined;
    progress: (line: string) => void;
  }): Promise<CompareRun>;
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
