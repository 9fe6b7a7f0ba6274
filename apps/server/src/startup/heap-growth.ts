import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last full collection kept, in percent.
 *
 * V8 picks that factor itself, up to 4 ×, to collect as seldom as it can. A webhook burst makes
 * garbage quickly (each 19 KB body is read, decoded, parsed and stored), so in `zekt bench
 * --compare` the heap grew to about 125 MB while what it held after a full collection was 37 MB,
 * and the durable PostgreSQL server peaked at 230–251 MB of RSS. With 50 %, the same runs peaked at
 * 159–164 MB on PostgreSQL and 185–195 MB on SQLite, with throughput and CPU per webhook within
 * the run-to-run noise; what it costs is in the tail, where more frequent full collections put a few
 * more webhooks behind a pause (p99 at 500 webhooks/s on PostgreSQL 16 → 20–33 ms;
 * docs/performance.md, "Peak RSS"). It is no ceiling: a heap that holds more grows with it.
 */
export const HEAP_GROWING_PERCENT = 50;

/** The V8 flag `boundHeapGrowth` sets. */
export const HEAP_GROWTH_FLAG = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;

/**
 * Sets `--heap-growing-percent` for the long-running server, unless the operator set it on the
 * command line (`node --heap-growing-percent=N …/main.js serve`); Node does not take it from
 * NODE_OPTIONS. V8 reads the flag at each full collection, so setting it at start-up takes effect.
 *
 * @returns whether this call set it
 */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (
    execArgv.some(
      (arg) => arg.startsWith('--heap-growing-percent') || arg.startsWith('--heap_growing_percent'),
    )
  )
    return false;
  setFlagsFromString(HEAP_GROWTH_FLAG);
  return true;
}
