import { type Kysely, sql } from 'kysely';
import { hotQuery } from './engine/compiled-query.js';
import { buildMessageByRunKey } from './messages.js';
import type { Database, MessageRow } from './schema.js';
import { buildRoutableSubscriptions, type RoutableSubscriptionRow } from './subscriptions.js';

type Params = { repositoryId: number; runId: number; runAttempt: number; workflowPath: string };

/**
 * What routing reads of a whitelisted workflow's event on PostgreSQL — the run's message and the
 * routable subscriptions — in one statement: one round trip where there were two (each costs the
 * server a socket write and a wake-up of the backend, whatever the statement does). One row, each
 * read as JSON, so a message is sent once however many subscriptions there are. JSON gives the
 * values as the driver's parsers do here: int8 as numbers (store/engine/postgres.ts), booleans.
 * One statement sees one snapshot, taken after the run's lock as each read's own was: a message
 * committed before us is joined.
 */
export async function readRoutingOnPostgres(
  db: Kysely<Database>,
  params: Params,
): Promise<{ message: MessageRow | undefined; subscriptions: RoutableSubscriptionRow[] }> {
  const row = (await routingReadQuery.execute(db, params)).rows[0];
  return { message: row?.message ?? undefined, subscriptions: row?.subscriptions ?? [] };
}

const routingReadQuery = hotQuery((db, p: Params) =>
  db.selectNoFrom([
    sql<MessageRow | null>`(select to_json(m) from (${buildMessageByRunKey(db, p)}) m)`.as('message'),
    sql<
      RoutableSubscriptionRow[]
    >`(select coalesce(json_agg(s order by s.subscription_id), '[]') from (${buildRoutableSubscriptions(db, p)}) s)`.as(
      'subscriptions',
    ),
  ]),
);
