import { type Kysely, type QueryCreator, sql } from 'kysely';
import { hotQuery } from './engine/compiled-query.js';
import type { newEventParams } from './events.js';
import type { Database } from './schema.js';
import { buildRecordWebhookDelivery } from './webhook-deliveries.js';

type Params = ReturnType<typeof newEventParams> & { guid: string; event: string; hookId: number };

/**
 * A completion webhook's GUID and its event on PostgreSQL, in one statement of data-modifying CTEs:
 * one round trip where there were two (each costs the server a socket write and a wake-up of the
 * backend, whatever the statement does). The event is inserted only when the receipt was: a GUID
 * already processed stores nothing, as when the event's insert was not reached. The run key's
 * unique constraint still decides whether the event is new, exactly as its own insert did.
 */
export async function recordReceivedEventOnPostgres(
  db: Kysely<Database>,
  params: Params,
): Promise<{ recorded: boolean; eventId: string | null }> {
  const row = (await receivedEventQuery.execute(db, params)).rows[0];
  return { recorded: Boolean(row?.recorded), eventId: row?.event_id ?? null };
}

// Cast: PostgreSQL cannot infer the type of a parameter in a select list.
const typed = (value: unknown, type: 'text' | 'bigint' | 'integer') =>
  sql`cast(${value} as ${sql.raw(type)})`;

const receivedEventQuery = hotQuery((db, p: Params) =>
  db
    .with('receipt', (qc) =>
      buildRecordWebhookDelivery(qc as unknown as QueryCreator<Database>, p).returning(
        sql<number>`1`.as('one'),
      ),
    )
    .with('event', (qc) =>
      qc
        .insertInto('events')
        .columns([
          'event_id',
          'repository_id',
          'run_id',
          'run_attempt',
          'account_id',
          'workflow_path',
          'workflow_name',
          'conclusion',
          'summary',
          'received_at',
          'route_after',
          'route_status',
          'routed_at',
          'message_id',
          'deliveries_created',
          'trace_parent',
        ])
        .expression(
          qc
            .selectNoFrom([
              typed(p.eventId, 'text').as('event_id'),
              typed(p.repositoryId, 'bigint').as('repository_id'),
              typed(p.runId, 'bigint').as('run_id'),
              typed(p.runAttempt, 'integer').as('run_attempt'),
              typed(p.accountId, 'bigint').as('account_id'),
              typed(p.workflowPath, 'text').as('workflow_path'),
              typed(p.workflowName, 'text').as('workflow_name'),
              typed(p.conclusion, 'text').as('conclusion'),
              typed(p.summary, 'text').as('summary'),
              typed(p.now, 'bigint').as('received_at'),
              typed(p.routeAfter, 'bigint').as('route_after'),
              sql`'pending'`.as('route_status'),
              sql`null`.as('routed_at'),
              sql`null`.as('message_id'),
              sql`0`.as('deliveries_created'),
              typed(p.traceParent, 'text').as('trace_parent'),
            ])
            .where((eb) => eb.exists(eb.selectFrom('receipt').select('one'))),
        )
        .onConflict((oc) => oc.columns(['repository_id', 'run_id', 'run_attempt']).doNothing())
        .returning('event_id'),
    )
    .selectNoFrom((eb) => [
      eb.exists(eb.selectFrom('receipt').select('one')).as('recorded'),
      eb.selectFrom('event').select('event_id').as('event_id'),
    ]),
);
