import type { Kysely, QueryCreator } from 'kysely';
import { type ArchiveParams, buildInsertArchive } from './archives.js';
import { buildInsertDeliveries, type DeliveriesShape } from './deliveries/insert-deliveries.js';
import { hotQueryFamily } from './engine/compiled-query.js';
import { buildFinishRouting, type FinishRoutingParams } from './events.js';
import type { Database } from './schema.js';

/**
 * A routed event's three writes on PostgreSQL — its archive, its deliveries, its route status — as
 * one statement of data-modifying CTEs: one round trip where there were three. Each round trip costs
 * the server a socket write and a wake-up of the backend, whatever the statement does, and these
 * run once per event. The three touch different rows, so running them in one statement (one
 * snapshot, no order among them) changes nothing they write; a failure of any fails the statement,
 * and the webhook's transaction with it, as before. SQLite keeps its three cheap statements.
 */
export function writeRoutedEventOnPostgres(
  db: Kysely<Database>,
  shape: DeliveriesShape,
  params: { archive: ArchiveParams; finish: FinishRoutingParams; deliveries: Record<string, unknown> },
): Promise<unknown> {
  return routedEventQuery(shape).execute(db, {
    ...prefixed('archive', params.archive),
    ...prefixed('finish', params.finish),
    ...prefixed('delivery', params.deliveries),
  });
}

const prefixed = (prefix: string, values: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(values).map(([name, value]) => [`${prefix}:${name}`, value]));

/** The parameters of `p` under `prefix`, by their own names. */
const under = <T>(p: Record<string, unknown>, prefix: string): T =>
  new Proxy({} as Record<string, unknown>, { get: (_, name) => p[`${prefix}:${String(name)}`] }) as T;

const routedEventQuery = hotQueryFamily(
  ({ count, columns }: DeliveriesShape) => `${count}:${columns.join(',')}`,
  (shape) => (db, p: Record<string, unknown>) =>
    buildFinishRouting(
      plain(
        db
          .with('archived', (qc) => buildInsertArchive(plain(qc), under<ArchiveParams>(p, 'archive')))
          .with('delivered', (qc) => buildInsertDeliveries(shape)(plain(qc), under(p, 'delivery'))),
      ),
      under<FinishRoutingParams>(p, 'finish'),
    ),
);

// The CTEs' names are in Kysely's type of the database from `with` on; the statements never read
// them (nothing reads what the other two wrote), so the builders take the plain database type.
const plain = (qc: unknown) => qc as QueryCreator<Database>;
