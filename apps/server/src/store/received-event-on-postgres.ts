import { CompiledQuery } from 'kysely';
import { sharedStatement } from './engine/shared-statements.js';
import type { newEventParams } from './events.js';
import { APP_WEBHOOK_ID } from './webhook-deliveries.js';

type Params = ReturnType<typeof newEventParams> & { guid: string; event: string; hookId: number };

/**
 * Completion webhooks' GUIDs and their events on PostgreSQL, in one statement of data-modifying CTEs
 * for any number of them (a shared statement: engine/shared-statements.ts). An event is inserted only
 * when its receipt was: a GUID already processed stores nothing. The run key's unique constraint
 * decides whether the event is new. Two webhooks of one group with the same GUID or the same run go
 * to the statement one after the other, so the second sees the first as any later webhook would.
 *
 * The receipt's check of `webhook_deliveries` (written before migration 0010) is the rule of
 * webhook-deliveries.ts: the same hook, an unknown one, or any hook for the App's webhook.
 */
export const recordReceivedEventOnPostgres = sharedStatement(
  async (db, rows: readonly Params[]): Promise<Array<{ recorded: boolean; eventId: string | null }>> => {
    const input = JSON.stringify(
      rows.map((p, i) => ({
        i,
        guid: p.guid,
        hook_id: p.hookId,
        event: p.event,
        event_id: p.eventId,
        repository_id: p.repositoryId,
        run_id: p.runId,
        run_attempt: p.runAttempt,
        account_id: p.accountId,
        workflow_path: p.workflowPath,
        workflow_name: p.workflowName,
        conclusion: p.conclusion,
        summary: p.summary,
        now: p.now,
        route_after: p.routeAfter,
        trace_parent: p.traceParent,
      })),
    );
    const result = await db.executeQuery<{ i: number; recorded: boolean; event_id: string | null }>(
      CompiledQuery.raw(RECEIVED_EVENTS, [input, APP_WEBHOOK_ID]),
    );
    const byRow = new Map(result.rows.map((row) => [row.i, row]));
    return rows.map((_, i) => {
      const row = byRow.get(i);
      return { recorded: Boolean(row?.recorded), eventId: row?.event_id ?? null };
    });
  },
  {
    keys: (p) => [`guid:${p.guid}`, `run:${p.repositoryId}:${p.runId}:${p.runAttempt}`],
  },
);

const RECEIVED_EVENTS = `with input as (
  select * from json_to_recordset($1::json) as r(i integer, guid text, hook_id bigint, event text,
    event_id text, repository_id bigint, run_id bigint, run_attempt integer, account_id bigint,
    workflow_path text, workflow_name text, conclusion text, summary text, now bigint,
    route_after bigint, trace_parent text)
), receipt as (
  insert into webhook_receipts (delivery_guid, hook_id, event, received_at)
  select guid, hook_id, event, now from input
  where not exists (
    select 1 from webhook_deliveries d
    where d.delivery_guid = input.guid
      and (d.hook_id = input.hook_id or d.hook_id is null or input.hook_id = $2::bigint))
  on conflict (delivery_guid, hook_id) do nothing
  returning delivery_guid, hook_id
), event as (
  insert into events (event_id, repository_id, run_id, run_attempt, account_id, workflow_path,
    workflow_name, conclusion, summary, received_at, route_after, route_status, routed_at,
    message_id, deliveries_created, trace_parent)
  select input.event_id, input.repository_id, input.run_id, input.run_attempt, input.account_id,
    input.workflow_path, input.workflow_name, input.conclusion, input.summary, input.now,
    input.route_after, 'pending', null, null, 0, input.trace_parent
  from input join receipt on receipt.delivery_guid = input.guid and receipt.hook_id = input.hook_id
  on conflict (repository_id, run_id, run_attempt) do nothing
  returning event_id
)
select input.i, receipt.delivery_guid is not null as recorded, event.event_id
from input
left join receipt on receipt.delivery_guid = input.guid and receipt.hook_id = input.hook_id
left join event on event.event_id = input.event_id`;
