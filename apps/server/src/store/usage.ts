import type { Kysely } from 'kysely';
import { emptyUsage, type UsageCounter, type UsageCounters, usageMonth } from '../domain/usage.js';
import type { Database } from './schema.js';

/** Adds to a usage counter of the month `now` falls in. Runs inside the caller's transaction. */
export async function countUsage(
  db: Kysely<Database>,
  accountId: number,
  counter: UsageCounter,
  now: number,
  by = 1,
): Promise<void> {
  await db
    .insertInto('usage_counters')
    .values({ account_id: accountId, month: usageMonth(now), counter, value: by })
    .onConflict((oc) =>
      oc
        .columns(['account_id', 'month', 'counter'])
        .doUpdateSet((eb) => ({ value: eb('usage_counters.value', '+', by) })),
    )
    .execute();
}

export async function getUsage(
  db: Kysely<Database>,
  accountId: number,
  month: string,
): Promise<UsageCounters> {
  const rows = await db
    .selectFrom('usage_counters')
    .select(['counter', 'value'])
    .where('account_id', '=', accountId)
    .where('month', '=', month)
    .execute();
  const usage = emptyUsage();
  for (const row of rows) {
    if (row.counter in usage) usage[row.counter as UsageCounter] = Number(row.value);
  }
  return usage;
}
