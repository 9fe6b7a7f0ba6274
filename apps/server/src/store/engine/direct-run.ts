import type { Kysely, QueryResult } from 'kysely';
import type { Database } from '../schema.js';

/**
 * The per-event statements on SQLite, run straight on the native connection while the group
 * commit holds it.
 *
 * Through Kysely, a compiled statement still takes its executor's path: a connection provider, a
 * mutex per connection, the driver's promise and the error classifier around it, a proxied
 * prepared statement. Measured on one `select` by primary key: 5–7 µs that way, 2 µs on the
 * native statement; the durable path runs ~15 such statements per event. While a group commit
 * runs, it holds SQLite's only connection and its units run one after another, so nothing else
 * can have a statement under way on it: a statement run at once there is exactly what Kysely
 * would have run next. The group registers its connection here for as long as it holds it;
 * `hotQuery` (compiled-query.ts) and the group's own BEGIN/SAVEPOINT/COMMIT use the runner when
 * they are given that connection, and Kysely otherwise.
 */
export type DirectRun = (sql: string, parameters: readonly unknown[]) => QueryResult<unknown>;

const runners = new WeakMap<Kysely<Database>, DirectRun>();

/** Lets `connection` run statements directly until the returned function is called. */
export function runDirectlyOn(connection: Kysely<Database>, run: DirectRun): () => void {
  runners.set(connection, run);
  return () => runners.delete(connection);
}

/** The direct runner of `db`, if it is a connection the group commit holds now. */
export function directRunOf(db: Kysely<Database>): DirectRun | undefined {
  return runners.get(db);
}
