import { CompiledQuery, type Kysely } from 'kysely';
import {
  daysOfMonth,
  emptyUsage,
  USAGE_COUNTERS,
  type UsageCounter,
  type UsageCounters,
  usageDay,
} from '../domain/usage.js';
import { hotQuery, hotQueryFamily } from './engine/compiled-query.js';
import type { SqlDialect } from './engine/dialect.js';
import { sharedStatement } from './engine/shared-statements.js';
import type { Database } from './schema.js';

/**
 * How many rows one counter of one account and day is spread over (`usage_daily_shards`). Every
 * event of an account adds to the same counters, and on PostgreSQL a transaction holds a counter
 * row's lock until its COMMIT: with one row, an account's concurrent webhooks committed one at a
 * time. A write adds to one row picked at random; reads sum them, and the counts of
 * `usage_daily`, where versions before migration 0009 wrote (getUsage). SQLite has one writer and
 * gains nothing, but shares the rule so both stores hold the same rows. With 8, the webhook's
 * upsert still waited on another transaction's lock: 0.65 ms mean under `zekt bench --compare`
 * on PostgreSQL, 0.25 ms with 32 (docs/performance.md); a month's read sums at most 32 rows per
 * counter and day.
 */
export const USAGE_SHARDS = 32;

/** The row of a counter the next write adds to. */
export function usageShard(): number {
  return Math.floor(Math.random() * USAGE_SHARDS);
}

/** Adds to a usage counter of the day `now` falls in. Runs inside the caller's transaction. */
export async function countUsage(
  db: Kysely<Database>,
  accountId: number,
  counter: UsageCounter,
  now: number,
  by = 1,
): Promise<void> {
  await countUsageQuery.execute(db, { accountId, day: usageDay(now), counter, shard: usageShard(), by });
}

const countUsageQuery = hotQuery(
  (db, p: { accountId: number; day: string; counter: UsageCounter; shard: number; by: number }) =>
    db
      .insertInto('usage_daily_shards')
      .values({ account_id: p.accountId, day: p.day, counter: p.counter, shard: p.shard, value: p.by })
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'day', 'counter', 'shard'])
          .doUpdateSet((eb) => ({ value: eb('usage_daily_shards.value', '+', p.by) })),
      ),
);

/**
 * Adds one to each of several counters of one account in one statement. Counter rows are the
 * hottest rows of the store (every event of an account updates the same few), so a transaction
 * should count last, just before it commits: its lock on them is then held for the least time.
 */
export async function countUsages(
  db: Kysely<Database>,
  dialect: SqlDialect,
  accountId: number,
  counters: readonly UsageCounter[],
  now: number,
): Promise<void> {
  if (dialect === 'postgres') {
    await countUsagesOnPostgres(db, { accountId, day: usageDay(now), counters });
    return;
  }
  const params: Record<string, unknown> = { day: usageDay(now), shard: usageShard(), accountId };
  counters.forEach((counter, i) => {
    params[`counter${i}`] = counter;
  });
  await countUsagesQuery(counters.length).execute(db, params);
}

/** One compiled statement per number of counters (the ingestion path counts two per webhook). */
const countUsagesQuery = hotQueryFamily(
  (size: number) => size,
  (size) => (db, p: Record<string, unknown>) =>
    db
      .insertInto('usage_daily_shards')
      .values(
        Array.from({ length: size }, (_, i) => ({
          account_id: p.accountId as number,
          day: p.day as string,
          counter: p[`counter${i}`] as UsageCounter,
          shard: p.shard as number,
          value: 1,
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'day', 'counter', 'shard'])
          .doUpdateSet((eb) => ({ value: eb('usage_daily_shards.value', '+', eb.ref('excluded.value')) })),
      ),
);

/** Counters of an account and day to add one to, in a statement shared by a group. */
export interface UsageCounts {
  accountId: number;
  day: string;
  counters: readonly UsageCounter[];
}

/**
 * The rows of `usage_daily_shards` to add to for several calls: summed per account, day and
 * counter (an upsert may not touch one row twice in a statement), each account's on one shard.
 */
export function usageRowsOf(
  calls: readonly UsageCounts[],
): Array<{ account_id: number; day: string; counter: string; shard: number; value: number }> {
  const sums = new Map<
    string,
    { account_id: number; day: string; counter: string; shard: number; value: number }
  >();
  const shards = new Map<number, number>();
  for (const { accountId, day, counters } of calls) {
    let shard = shards.get(accountId);
    if (shard === undefined) {
      shard = usageShard();
      shards.set(accountId, shard);
    }
    for (const counter of counters) {
      const key = `${accountId}|${day}|${counter}`;
      const sum = sums.get(key);
      if (sum) sum.value += 1;
      else sums.set(key, { account_id: accountId, day, counter, shard, value: 1 });
    }
  }
  return [...sums.values()];
}

/**
 * Adds `usageRowsOf`'s rows, given as the JSON parameter `$n`, in key order: two groups lock the
 * counter rows they share in the same order, so they cannot deadlock on them.
 */
export const addUsageRowsSql = (
  parameter: number,
) => `insert into usage_daily_shards (account_id, day, counter, shard, value)
select account_id, day, counter, shard, value
from json_to_recordset($${parameter}::json) as r(account_id bigint, day text, counter text, shard integer, value bigint)
order by account_id, day, counter, shard
on conflict (account_id, day, counter, shard) do update set value = usage_daily_shards.value + excluded.value`;

/** `countUsages` on PostgreSQL, one statement for the webhooks of a group (engine/shared-statements.ts). */
const countUsagesOnPostgres = sharedStatement(async (db, calls: readonly UsageCounts[]) => {
  await db.executeQuery(CompiledQuery.raw(COUNT_USAGES, [JSON.stringify(usageRowsOf(calls))]));
  return calls.map(() => undefined);
});

const COUNT_USAGES = addUsageRowsSql(1);

export interface MonthUsage {
  counters: UsageCounters;
  /** Every day of the month up to `now`, oldest first (days without counts are zeros). */
  days: Array<{ day: string; counters: UsageCounters }>;
}

/** The counters of a month (`YYYY-MM`), in total and per day. */
export async function getUsage(
  db: Kysely<Database>,
  accountId: number,
  month: string,
  now: number = Date.now(),
): Promise<MonthUsage> {
  const rows = await db
    .selectFrom('usage_daily_shards')
    .select(['day', 'counter', 'value'])
    .where('account_id', '=', accountId)
    .where('day', '>=', `${month}-01`)
    .where('day', '<=', `${month}-31`)
    .unionAll(
      db
        .selectFrom('usage_daily')
        .select(['day', 'counter', 'value'])
        .where('account_id', '=', accountId)
        .where('day', '>=', `${month}-01`)
        .where('day', '<=', `${month}-31`),
    )
    .execute();
  const known = new Set<string>(USAGE_COUNTERS);
  const counters = emptyUsage();
  const perDay = new Map<string, UsageCounters>();
  for (const day of daysOfMonth(month, now)) perDay.set(day, emptyUsage());
  for (const row of rows) {
    if (!known.has(row.counter)) continue;
    const counter = row.counter as UsageCounter;
    counters[counter] += row.value;
    let day = perDay.get(row.day);
    if (!day) {
      day = emptyUsage();
      perDay.set(row.day, day);
    }
    day[counter] += row.value;
  }
  const days = [...perDay].sort(([a], [b]) => a.localeCompare(b)).map(([day, c]) => ({ day, counters: c }));
  return { counters, days };
}
