import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * `zekt_rows(jsonb)` on PostgreSQL: the elements of a JSON array, one row each, which the planner
 * takes for one row. The statements a group shares (engine/shared-statements.ts) carry their rows
 * as one JSON parameter and join them with a table by its key; PostgreSQL's own recordset functions
 * are taken for 100 rows, and for 100 rows a hash join over a sequential scan of a table of a few
 * thousand rows is the cheaper plan on paper. A group holds one to a few dozen rows: read as one,
 * the join is a lookup by key at any size of the table, from an empty one on, so the plan
 * PostgreSQL keeps for a prepared statement (engine/prepared-statements.ts) stays right as the
 * table grows, and the statement is planned once per connection instead of on every run.
 *
 * Volatile so that PostgreSQL does not inline it: inlined, the estimate would be
 * `jsonb_array_elements`' 100 rows again. SQLite has no such planner estimate to correct.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`create function zekt_rows(jsonb) returns setof jsonb
    language sql volatile rows 1
    as 'select jsonb_array_elements($1)'`.execute(db);
}
