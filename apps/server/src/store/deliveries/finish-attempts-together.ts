import { CompiledQuery, type Kysely } from 'kysely';
import { type UsageCounter, usageDay } from '../../domain/usage.js';
import type { Database, DeliveryUpdate } from '../schema.js';
import { usageShard } from '../usage.js';
import { attemptRow, type RecordAttemptInput } from './attempt-record.js';

/** An attempt to finish, as finish-attempt.ts is given it. */
export type FinishInput = RecordAttemptInput & { dispatchCountedAt?: number | undefined };

/**
 * The columns an attempt's outcome writes (delivery/dispatch-attempt.ts: accepted, retried, failed,
 * put back for pacing), with their PostgreSQL types. The statement's text must not depend on the
 * batch, so it sets each of them on every row, to the given value or else to itself; an update of
 * any other column (the lease's, the wait for the workflow's) is recorded alone.
 */
const COLUMNS = {
  status: 'text',
  dispatch_state: 'text',
  attempt_count: 'integer',
  next_attempt_at: 'bigint',
  slot_reserved: 'boolean',
  retry_number: 'integer',
  platform_response: 'text',
  failure_reason: 'text',
  payload_by_reference: 'boolean',
  updated_at: 'bigint',
  consumer_run_id: 'bigint',
  consumer_run_url: 'text',
  consumer_run_html_url: 'text',
  run_seen_at: 'bigint',
  run_follow_at: 'bigint',
  run_follow_reads: 'integer',
} as const satisfies Partial<Record<keyof DeliveryUpdate, string>>;

/** Whether `finishAttemptsTogether` can record this update (else it is recorded alone). */
export function finishesTogether(update: DeliveryUpdate): boolean {
  return Object.entries(update).every(([column, value]) => value === undefined || column in COLUMNS);
}

/**
 * Finishes several attempts of distinct deliveries in one statement on PostgreSQL, exactly as
 * finish-attempt.ts finishes one: each delivery's update only while `owner` holds its lease, its
 * attempt only if it was updated, and `dispatchApiCalls` counted for each updated one called on
 * GitHub. Resolves with the deliveries recorded.
 *
 * The calls are one parameter, a JSON array read as rows (`zekt_rows`, migration 0018: taken for
 * one row, so the join is by the primary key whatever the table holds), so the text, the prepared
 * statement named after it (engine/prepared-statements.ts) and its plan are one for any batch size
 * and any mix of outcomes. A column is set from a row only when the row's update names it
 * (`u ? 'column'`): a null is a value to write, an absent column keeps its value.
 */
export async function finishAttemptsTogether(
  db: Kysely<Database>,
  inputs: readonly FinishInput[],
): Promise<Set<string>> {
  // One shard per statement: the batch's counts of an account and day add to a single row.
  const shard = usageShard();
  const rows = inputs.map((input) => {
    const since = input.awaitStartSince;
    const countedAt = input.dispatchCountedAt;
    return {
      // The attempt's columns; its subscription is the updated delivery's, read by the statement.
      ...(input.attempt ? attemptRow(input.deliveryId, '', input.attempt) : {}),
      delivery_id: input.deliveryId,
      owner: input.owner,
      since: since === undefined ? null : Math.trunc(since),
      u: input.update,
      day: countedAt === undefined ? null : usageDay(countedAt),
      shard,
    };
  });
  const result = await db.executeQuery<{ delivery_id: string }>(
    CompiledQuery.raw(FINISH_TOGETHER, [JSON.stringify(rows)]),
  );
  return new Set(result.rows.map((row) => row.delivery_id));
}

const SET_COLUMNS = Object.entries(COLUMNS)
  .map(
    ([column, type]) =>
      `${column} = case when r.u ? '${column}' then (r.u ->> '${column}')::${type} else d.${column} end`,
  )
  .join(',\n    ');

// `updated` first, named as the single statement's is: the plan checks (test/postgres/query-plans)
// find either by it. The counters are upserted in key order, so two statements counting for the
// same accounts take their rows' locks in the same order and never deadlock; and aggregated,
// because `on conflict do update` cannot touch one row twice in a statement.
const FINISH_TOGETHER = `with updated as (
  update deliveries d set
    ${SET_COLUMNS},
    lease_owner = null,
    lease_expires_at = null,
    awaiting_start_since = case
      when r.since is null then d.awaiting_start_since
      when d.status = 'Dispatched' and d.confirmed_at is null and d.run_seen_at is null then r.since
      else null end
  from (select r.* from zekt_rows($1::jsonb) e, jsonb_to_record(e) as r(delivery_id text, owner text,
    since bigint, u jsonb, attempt_id text, number integer, started_at bigint, duration_ms integer,
    outcome text, status_code integer, error_category text, error_message text,
    response_headers text, day text, shard integer)) r
  where d.delivery_id = r.delivery_id and d.lease_owner = r.owner
  returning d.delivery_id, d.subscription_id, d.consumer_account_id, r.attempt_id, r.number,
    r.started_at, r.duration_ms, r.outcome, r.status_code, r.error_category, r.error_message,
    r.response_headers, r.day, r.shard
), attempt as (
  insert into delivery_attempts (attempt_id, delivery_id, subscription_id, number, started_at,
    duration_ms, outcome, status_code, error_category, error_message, response_headers)
  select attempt_id, delivery_id, subscription_id, number, started_at, duration_ms, outcome,
    status_code, error_category, error_message, response_headers
  from updated where attempt_id is not null
), usage as (
  insert into usage_daily_shards (account_id, day, counter, shard, value)
  select consumer_account_id, day, '${'dispatchApiCalls' satisfies UsageCounter}', shard, count(*)
  from updated where day is not null
  group by consumer_account_id, day, shard
  order by consumer_account_id, day, shard
  on conflict (account_id, day, counter, shard) do update set value = usage_daily_shards.value + excluded.value
)
select delivery_id from updated`;
