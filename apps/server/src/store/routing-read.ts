import type { Kysely } from 'kysely';
import type { RoutableSubscription } from '../domain/routing.js';
import type { DispatchTarget } from './dispatch-context.js';
import type { SqlDialect } from './engine/dialect.js';
import { getMessageByRunKey } from './messages.js';
import type { RoutingRow } from './received-event-on-postgres.js';
import { readRoutingOnPostgres } from './routing-read-on-postgres.js';
import type { Database, MessageRow } from './schema.js';
import { routableSubscriptions, toRoutableSubscription } from './subscriptions.js';

/** What routing reads of an event. */
export interface RoutingRead {
  message: MessageRow | undefined;
  subscriptions: Array<RoutableSubscription & { target: DispatchTarget }>;
}

/**
 * The read as routing takes it, from the rows of a statement that read it (this module's on
 * PostgreSQL, or the receive statement: received-event-on-postgres.ts).
 */
export function routingReadFrom(row: RoutingRow): RoutingRead {
  return { message: row.message, subscriptions: row.subscriptions.map(toRoutableSubscription) };
}

/**
 * What routing reads of an event: the run's message, and the approved subscriptions of its
 * workflow when the workflow is whitelisted (none otherwise). One statement on PostgreSQL
 * (routing-read-on-postgres.ts; none more for an event routed as it is stored: the receive
 * statement reads it, received-event-on-postgres.ts), two on SQLite.
 */
export async function readRouting(
  db: Kysely<Database>,
  dialect: SqlDialect,
  run: { repositoryId: number; runId: number; runAttempt: number; workflowPath: string },
  whitelisted: boolean,
): Promise<RoutingRead> {
  if (dialect === 'postgres' && whitelisted) return routingReadFrom(await readRoutingOnPostgres(db, run));
  const message = await getMessageByRunKey(db, run);
  return {
    message,
    subscriptions: whitelisted ? await routableSubscriptions(db, run.repositoryId, run.workflowPath) : [],
  };
}
