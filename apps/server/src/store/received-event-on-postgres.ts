import { CompiledQuery, type Kysely, sql } from 'kysely';
import { NEW_EVENT_COUNTERS, RECEIPT_COUNTERS, usageDay } from '../domain/usage.js';
import { sharedStatement } from './engine/shared-statements.js';
import type { Database, MessageRow, RepositoryRow, WorkflowRow } from './schema.js';
import { buildRoutableSubscriptions, type RoutableSubscriptionRow } from './subscriptions.js';
import { usageShard } from './usage.js';
import { APP_WEBHOOK_ID } from './webhook-deliveries.js';
import { WORKFLOW_SEEN_PRECISION_MS } from './workflows.js';

export interface ReceiveParams {
  repositoryId: number;
  runId: number;
  runAttempt: number;
  /** `repositoryId:runId:runAttempt`: what the run's advisory lock is taken on (accounts.ts). */
  runKey: string;
  workflowPath: string;
  workflowName: string;
  conclusion: string | null;
  summary: string;
  guid: string;
  event: string;
  hookId: number;
  eventId: string;
  now: number;
  routeAfter: number;
  traceParent: string | null;
}

export interface Received {
  repository: RepositoryRow | undefined;
  workflow: WorkflowRow | undefined;
  /** The GUID was new through its hook, and the repository a provider: its receipt was written. */
  recorded: boolean;
  /** The event written; null when the run key was received already (or nothing was recorded). */
  eventId: string | null;
}

/** What routing reads of a new event, read by the statement that stored it. */
export interface RoutingRow {
  message: MessageRow | undefined;
  /** The workflow's routable subscriptions; none when it is not whitelisted. */
  subscriptions: RoutableSubscriptionRow[];
}

/**
 * Completion webhooks on PostgreSQL, up to what routing reads of their events, in one statement for
 * any number of them (a shared statement: engine/shared-statements.ts):
 *
 * 1. each run's advisory lock, in the order of the runs' keys whatever the order of the webhooks,
 *    so two groups holding some of the same runs cannot deadlock (a run twice in one group is
 *    locked twice by one transaction, which PostgreSQL allows);
 * 2. then each run's repository and workflow, by key (never joined: the planner takes a recordset
 *    for 100 rows, and joined to a table it deems small it reads the table whole, a plan a named
 *    statement would keep as the table grows);
 * 3. for a repository that is an enabled provider, the webhook's receipt (the rule of
 *    webhook-deliveries.ts: a GUID already processed through the same hook, an unknown one, or any
 *    hook for the App's webhook, stores nothing) and, when the receipt is new, the run's event,
 *    under the account the repository belongs to; the run key's unique constraint decides whether
 *    the event is new;
 * 4. for each new event, what routing reads (routing-read.ts): the run's message, and the
 *    workflow's routable subscriptions when it is whitelisted.
 *
 * The locks are taken before any row is written (`found` is materialized: scanning it takes them
 * all). The statement's snapshot predates the locks' waits (accounts.ts, `getRepositoryLockingRun`),
 * so what it reads itself are rows the run's lock does not guard (the repository, the workflow, the
 * subscriptions). The run's message is what the lock guards: it is read by `zekt_run_message`
 * (migration 0019), a `VOLATILE` function, whose query takes a snapshot of its own when it is called,
 * after the run's lock, so a message committed while the statement waited for the lock is joined
 * (test/postgres/run-lock.test.ts). It used to be read by a statement of its own after this one: a
 * round trip more for each group. Two webhooks of one group with the same GUID or the same run go
 * to the statement one after the other, so the second sees the first as any later webhook would.
 * Rows come back as JSON, whose numbers and booleans are what the driver's parsers give
 * (engine/postgres.ts).
 */
export const receiveCompletionsOnPostgres = sharedStatement(
  async (db, rows: readonly ReceiveParams[]): Promise<Array<Received & { routing?: RoutingRow }>> => {
    const statement = receiveAndRead(db);
    return runReceive(db, statement.sql, rows, statement.parameters);
  },
  {
    keys: receiveKeys,
  },
);

/** What two receptions may both write: the webhook's GUID and the run's event (and lock). */
export function receiveKeys(p: ReceiveParams): readonly string[] {
  return [`guid:${p.guid}`, `run:${p.runKey}`];
}

/**
 * `receiveCompletionsOnPostgres`, and then what a completion webhook that is not routed in the same
 * transaction writes after it, in the same statement: the workflow's sighting (workflows.ts,
 * `recordWorkflowSeen`: only when missing, renamed or older than its precision) and the usage
 * counters of each receipt written (domain/usage.ts, `RECEIPT_COUNTERS` and `NEW_EVENT_COUNTERS`,
 * on one shard: usage.ts). One statement is atomic, so it needs no transaction: the API
 * role's webhook is one round trip, shared with the webhooks of the same turn
 * (engine/statement-batches.ts), where BEGIN, two statements and COMMIT were four.
 */
export function receiveAndCountOnPostgres(
  db: Kysely<Database>,
  rows: readonly ReceiveParams[],
): Promise<Received[]> {
  return runReceive(
    db,
    RECEIVE_AND_COUNT,
    rows,
    [],
    [
      WORKFLOW_SEEN_PRECISION_MS,
      usageShard(),
      JSON.stringify(NEW_EVENT_COUNTERS),
      JSON.stringify(RECEIPT_COUNTERS),
    ],
  );
}

/**
 * Runs a receive statement: `before`, the statement's parameters numbered before the rows' (those
 * of a subquery compiled by Kysely, numbered from $1), then the rows and the App's hook id, then
 * `after`.
 */
async function runReceive(
  db: Kysely<Database>,
  text: string,
  rows: readonly ReceiveParams[],
  before: readonly unknown[],
  after: readonly unknown[] = [],
): Promise<Array<Received & { routing?: RoutingRow }>> {
  const input = JSON.stringify(
    rows.map((p, i) => ({
      i,
      repository_id: p.repositoryId,
      run_id: p.runId,
      run_attempt: p.runAttempt,
      run_key: p.runKey,
      path: p.workflowPath,
      workflow_name: p.workflowName,
      conclusion: p.conclusion,
      summary: p.summary,
      guid: p.guid,
      event: p.event,
      hook_id: p.hookId,
      event_id: p.eventId,
      now: p.now,
      day: usageDay(p.now),
      route_after: p.routeAfter,
      trace_parent: p.traceParent,
    })),
  );
  const result = await db.executeQuery<{
    i: number;
    repository: RepositoryRow | null;
    workflow: WorkflowRow | null;
    recorded: boolean;
    event_id: string | null;
    message?: MessageRow | null;
    subscriptions?: RoutableSubscriptionRow[] | null;
  }>(CompiledQuery.raw(text, [...before, input, APP_WEBHOOK_ID, ...after]));
  const byRow = new Map(result.rows.map((row) => [row.i, row]));
  return rows.map((_, i) => {
    const row = byRow.get(i);
    const received: Received & { routing?: RoutingRow } = {
      repository: row?.repository ?? undefined,
      workflow: row?.workflow ?? undefined,
      recorded: Boolean(row?.recorded),
      eventId: row?.event_id ?? null,
    };
    if (row?.event_id && row.message !== undefined) {
      received.routing = { message: row.message ?? undefined, subscriptions: row.subscriptions ?? [] };
    }
    return received;
  });
}

/** The receive statement's CTEs, its rows and the App's hook id at the placeholders given. */
const receiveCtes = (rows: string, appHook: string) => `with input as (
  select * from json_to_recordset(${rows}::json) as r(i integer, repository_id bigint, run_id bigint,
    run_attempt integer, run_key text, path text, workflow_name text, conclusion text, summary text,
    guid text, event text, hook_id bigint, event_id text, now bigint, day text, route_after bigint,
    trace_parent text)
), locked as materialized (
  select ordered.i, pg_advisory_xact_lock(hashtextextended(ordered.run_key, 0)) as locked
  from (select i, run_key from input order by run_key, i offset 0) ordered
), found as materialized (
  select input.*,
    (select to_json(r) from repositories r where r.repository_id = input.repository_id) as repository,
    (select to_json(w) from workflows w where w.repository_id = input.repository_id and w.path = input.path)
      as workflow
  from input join locked on locked.i = input.i
), provider as (
  select found.*, (found.repository ->> 'account_id')::bigint as account_id from found
  where (found.repository ->> 'provider_enabled')::boolean and found.repository ->> 'removed_at' is null
), receipt as (
  insert into webhook_receipts (delivery_guid, hook_id, event, received_at)
  select guid, hook_id, event, now from provider
  where not exists (
    select 1 from webhook_deliveries d
    where d.delivery_guid = provider.guid
      and (d.hook_id = provider.hook_id or d.hook_id is null or provider.hook_id = ${appHook}::bigint))
  on conflict (delivery_guid, hook_id) do nothing
  returning delivery_guid, hook_id
), event as (
  insert into events (event_id, repository_id, run_id, run_attempt, account_id, workflow_path,
    workflow_name, conclusion, summary, received_at, route_after, route_status, routed_at,
    message_id, deliveries_created, trace_parent)
  select provider.event_id, provider.repository_id, provider.run_id, provider.run_attempt,
    provider.account_id, provider.path, provider.workflow_name, provider.conclusion, provider.summary,
    provider.now, provider.route_after, 'pending', null, null, 0, provider.trace_parent
  from provider join receipt on receipt.delivery_guid = provider.guid and receipt.hook_id = provider.hook_id
  on conflict (repository_id, run_id, run_attempt) do nothing
  returning event_id
)`;

const RESULT = `select found.i, found.repository, found.workflow, receipt.delivery_guid is not null as recorded,
  event.event_id
from found
left join receipt on receipt.delivery_guid = found.guid and receipt.hook_id = found.hook_id
left join event on event.event_id = found.event_id`;

const RECEIVE_AND_COUNT = `${receiveCtes('$1', '$2')}, recorded as (
  select provider.*, event.event_id is not null as new_event
  from provider
  join receipt on receipt.delivery_guid = provider.guid and receipt.hook_id = provider.hook_id
  left join event on event.event_id = provider.event_id
), sighting as (
  insert into workflows (repository_id, path, name, whitelisted, blocked_count, first_seen_at,
    last_seen_at, created_at, updated_at)
  select distinct on (repository_id, path) repository_id, path, workflow_name, false, 0, now, now,
    now, now
  from recorded
  where workflow is null or workflow ->> 'name' is distinct from workflow_name
    or workflow ->> 'first_seen_at' is null or workflow ->> 'last_seen_at' is null
    or now - (workflow ->> 'last_seen_at')::bigint >= $3::bigint
  order by repository_id, path, now desc
  on conflict (repository_id, path) do update set name = excluded.name,
    first_seen_at = coalesce(workflows.first_seen_at, excluded.first_seen_at),
    last_seen_at = excluded.last_seen_at, updated_at = excluded.updated_at
), usage as (
  insert into usage_daily_shards (account_id, day, counter, shard, value)
  select recorded.account_id, recorded.day, counted.counter, $4::integer, count(*)
  from recorded cross join lateral json_array_elements_text(
    case when recorded.new_event then $5::json else $6::json end) as counted(counter)
  group by recorded.account_id, recorded.day, counted.counter
  order by recorded.account_id, recorded.day, counted.counter
  on conflict (account_id, day, counter, shard) do update
    set value = usage_daily_shards.value + excluded.value
)
${RESULT}`;

/**
 * The receive statement with routing's read of each new event (see `receiveCompletionsOnPostgres`).
 * The subscriptions' read is routing's own builder (subscriptions.ts), correlated to each row
 * instead of bound to one run's values: compiled once, its parameters first.
 */
let readTemplate: { sql: string; parameters: readonly unknown[] } | undefined;
function receiveAndRead(db: Kysely<Database>): { sql: string; parameters: readonly unknown[] } {
  if (!readTemplate) {
    const run = {
      repositoryId: sql.ref('found.repository_id'),
      workflowPath: sql.ref('found.path'),
    } as unknown as { repositoryId: number; workflowPath: string };
    const subscriptions = sql`select coalesce(json_agg(s order by s.subscription_id), '[]')
    from (${buildRoutableSubscriptions(db, run)}) s`.compile(db);
    const n = subscriptions.parameters.length;
    readTemplate = {
      sql: `${receiveCtes(`$${n + 1}`, `$${n + 2}`)}
select found.i, found.repository, found.workflow, receipt.delivery_guid is not null as recorded,
  event.event_id,
  case when event.event_id is not null
    then zekt_run_message(found.repository_id, found.run_id, found.run_attempt) end as message,
  case when event.event_id is not null and (found.workflow ->> 'whitelisted')::boolean
    then (${subscriptions.sql}) else '[]' end as subscriptions
from found
left join receipt on receipt.delivery_guid = found.guid and receipt.hook_id = found.hook_id
left join event on event.event_id = found.event_id`,
      parameters: subscriptions.parameters,
    };
  }
  return readTemplate;
}
