import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * `zekt_run_message(repository_id, run_id, run_attempt)` on PostgreSQL: the run's message as JSON
 * (null when there is none), read with a snapshot taken when it is called.
 *
 * A completion webhook routed as it is stored reads its run's message after taking the run's
 * advisory lock, so that a message being stored under that lock right now is joined
 * (store/received-event-on-postgres.ts). A statement's own snapshot is taken when the statement
 * starts, before its lock waits: a plain subquery (or a `STABLE` function) in the statement that
 * takes the lock would miss a message committed while it waited, which is why the read used to be
 * a statement, and a round trip, of its own. A `VOLATILE` SQL function takes a new snapshot for
 * its query each time it is called (READ COMMITTED), after the lock: the receive statement calls
 * this one for each new event, and the read costs no round trip. Not inlined either: a scalar SQL
 * function whose body reads a table never is. SQLite has one writer, so its reads need no such care.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`create function zekt_run_message(bigint, bigint, integer) returns json
    language sql volatile
    as 'select to_json(m) from messages m
      where m.repository_id = $1 and m.run_id = $2 and m.run_attempt = $3'`.execute(db);
}
