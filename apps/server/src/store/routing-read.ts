import type { Kysely } from 'kysely';
import type { RoutableSubscription } from '../domain/routing.js';
import type { DispatchTarget } from './dispatch-context.js';
import type { SqlDialect } from './engine/dialect.js';
import { getMessageByRunKey } from './messages.js';
import { readRoutingOnPostgres } from './routing-read-on-postgres.js';
import type { Database, MessageRow } from './schema.js';
import { routableSubscriptions, toRoutableSubscription } from './subscriptions.js';

/**
 * What routing reads of an event: the run's message, and the approved subscriptions of its
 * workflow when the workflow is whitelisted (none otherwise). One statement on PostgreSQL
 * (routing-read-on-postgres.ts), two on SQLite.
 */
export async function readRouting(
  db: Kysely<Database>,
  dialect: SqlDialect,
  run: { repositoryId: number; runId: number; runAttempt: number; workflowPath: string },
  whitelisted: boolean,
): Promise<{
  message: MessageRow | undefined;
  subscriptions: Array<RoutableSubscription & { target: DispatchTarget }>;
}> {
  if (dialect === 'postgres' && whitelisted) {
    const read = await readRoutingOnPostgres(db, run);
    return { message: read.message, subscriptions: read.subscriptions.map(toRoutableSubscription) };
  }
  const message = await getMessageByRunKey(db, run);
  return {
    message,
    subscriptions: whitelisted ? await routableSubscriptions(db, run.repositoryId, run.workflowPath) : [],
  };
}
