import { type Kysely, sql } from 'kysely';
import { type UsageCounter, usageDay } from '../../domain/usage.js';
import { createStatementBatch, type StatementBatch } from '../engine/statement-batches.js';
import type { Database } from '../schema.js';
import type { Store } from '../store.js';
import { countUsage, usageShard } from '../usage.js';
import { attemptRow } from './attempt-record.js';
import { type FinishInput, finishAttemptsTogether, finishesTogether } from './finish-attempts-together.js';
import { recordLeasedAttempt } from './record-attempt.js';
import { updateLeased } from './update-leased.js';

/**
 * The dispatcher's end of an attempt: the delivery's new state, the attempt, and — when GitHub was
 * called — the consumer's `dispatchApiCalls` counter, all or nothing, committed before it returns.
 * On PostgreSQL that is one statement (data-modifying CTEs run atomically, and with no transaction
 * around them that is one round trip where BEGIN, three statements and COMMIT were five), shared
 * with the attempts finished in the same turn of the event loop (engine/statement-batches.ts); on SQLite, or
 * with writes `alongside` (a rare exhausted delivery's alert), one transaction.
 */
export async function finishAttempt(
  store: Store,
  input: FinishInput & {
    /** More writes that must commit with the attempt, only if it is recorded (a transaction then). */
    alongside?: ((trx: Kysely<Database>) => Promise<void>) | undefined;
  },
): Promise<boolean> {
  const countedAt = input.dispatchCountedAt;
  const record = async (trx: Kysely<Database>) => {
    const updated = await recordLeasedAttempt(trx, input);
    if (updated && countedAt !== undefined) {
      await countUsage(trx, updated.consumer_account_id, 'dispatchApiCalls', countedAt);
    }
    return updated !== undefined;
  };
  const alongside = input.alongside;
  if (alongside) {
    // What `alongside` does is the caller's, so it may not run twice: a transaction of its own.
    return store.transaction(async (trx) => {
      const recorded = await record(trx);
      if (recorded) await alongside(trx);
      return recorded;
    });
  }
  // Nothing but the transaction's writes: on SQLite it may share its group's transaction without
  // a savepoint of its own (store.ts).
  if (store.dialect === 'sqlite') return store.sharedTransaction(record);
  if (!finishesTogether(input.update)) return finishAlone(store.db, input);
  return batchOf(store).run(input);
}

/** Attempts in one statement at most: bounds its parameter and the time it holds its rows. */
export const MAX_ATTEMPT_BATCH = 256;

const batches = new WeakMap<Store, StatementBatch<FinishInput, boolean>>();

function batchOf(store: Store): StatementBatch<FinishInput, boolean> {
  let batch = batches.get(store);
  if (!batch) {
    batch = createStatementBatch<FinishInput, boolean>({
      together: async (inputs) => {
        const recorded = await finishAttemptsTogether(store.db, inputs);
        return inputs.map((input) => recorded.has(input.deliveryId));
      },
      alone: (input) => finishAlone(store.db, input),
      // One statement cannot update a delivery twice.
      keys: (input) => [input.deliveryId],
      maxBatch: MAX_ATTEMPT_BATCH,
    });
    batches.set(store, batch);
    store.drainOnClose(batch.drain);
  }
  return batch;
}

/** One attempt in a statement of its own: an update no batch writes, or a batch that failed. */
async function finishAlone(db: Kysely<Database>, input: FinishInput): Promise<boolean> {
  const countedAt = input.dispatchCountedAt;
  const a = input.attempt;
  const row = a ? attemptRow(input.deliveryId, '', a) : null;
  const attempt = row
    ? sql`, attempt as (
        insert into delivery_attempts (attempt_id, delivery_id, subscription_id, number, started_at,
          duration_ms, outcome, status_code, error_category, error_message, response_headers)
        select ${row.attempt_id}, ${row.delivery_id}, subscription_id, ${row.number}::integer,
          ${row.started_at}::bigint, ${row.duration_ms}::integer, ${row.outcome}, ${row.status_code}::integer,
          ${row.error_category}::text, ${row.error_message}::text, ${row.response_headers}::text
        from updated)`
    : sql``;
  const usage =
    countedAt === undefined
      ? sql``
      : sql`, usage as (
        insert into usage_daily_shards (account_id, day, counter, shard, value)
        select consumer_account_id, ${usageDay(countedAt)}, ${'dispatchApiCalls' satisfies UsageCounter},
          ${usageShard()}::integer, 1 from updated
        on conflict (account_id, day, counter, shard) do update set value = usage_daily_shards.value + 1)`;
  const result = await sql<{ n: number }>`with updated as (${updateLeased(db, input)})${attempt}${usage}
    select count(*)::integer as n from updated`.execute(db);
  return Number(result.rows[0]?.n ?? 0) === 1;
}
