import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.js';

/**
 * Fixed-window counters for rate limits, in the store so that every API process of a deployment
 * counts together. One row per bucket and window.
 */

/** Adds one to the bucket's count in the window; returns the new count. */
export async function incrementWindow(
  db: Kysely<Database>,
  bucket: string,
  windowStart: number,
): Promise<number> {
  const row = await db
    .insertInto('rate_limit_counters')
    .values({ bucket, window_start: windowStart, count: 1 })
    .onConflict((oc) =>
      oc
        .columns(['bucket', 'window_start'])
        .doUpdateSet({ count: sql<number>`${sql.ref('rate_limit_counters.count')} + 1` }),
    )
    .returning('count')
    .executeTakeFirstOrThrow();
  return row.count;
}

/** The highest count among `buckets` in the window (0 when none was counted). */
export async function highestCount(
  db: Kysely<Database>,
  buckets: string[],
  windowStart: number,
): Promise<number> {
  if (buckets.length === 0) return 0;
  const rows = await db
    .selectFrom('rate_limit_counters')
    .select('count')
    .where('bucket', 'in', buckets)
    .where('window_start', '=', windowStart)
    .execute();
  return Math.max(0, ...rows.map((row) => row.count));
}

/** Whether any bucket starting with `prefix` (no LIKE wildcards in it) was counted in the window. */
export async function anyCountedWithPrefix(
  db: Kysely<Database>,
  prefix: string,
  windowStart: number,
): Promise<boolean> {
  // The table holds an hour of windows at most (the sweeper removes older ones).
  const row = await db
    .selectFrom('rate_limit_counters')
    .select('count')
    .where('window_start', '=', windowStart)
    .where('bucket', 'like', `${prefix}%`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Windows that started before `cutoff`, a few windows per call (every bucket of a window at once:
 * each is one short statement), for the retention sweeper. Returns how many rows went.
 */
export async function deleteOldWindows(
  db: Kysely<Database>,
  cutoff: number,
  windows: number,
): Promise<number> {
  const starts = (
    await db
      .selectFrom('rate_limit_counters')
      .select('window_start')
      .distinct()
      .where('window_start', '<', cutoff)
      .limit(windows)
      .execute()
  ).map((row) => row.window_start);
  if (starts.length === 0) return 0;
  const result = await db
    .deleteFrom('rate_limit_counters')
    .where('window_start', 'in', starts)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
