import { type RawBuilder, sql } from 'kysely';

/**
 * A list bound as one parameter, so a statement's SQL text is the same whatever the list's length:
 * compiled once (compiled-query.ts), prepared once on PostgreSQL, planned once. Bound element by
 * element, each length was a new text, and lists were padded to powers of two to keep those few.
 *
 * PostgreSQL takes the list as an array (`= any($1::bigint[])`); SQLite has no arrays and reads the
 * list from its JSON text (`in (select value from json_each(?))`), still one range per element of
 * an index on the column.
 */

/** SQLite: the rows of `list`, a parameter bound to `sqliteList(items)`. */
export function sqliteListRows(list: unknown): RawBuilder<unknown> {
  return sql`(select value from json_each(${list}))`;
}

/** SQLite: the value to bind for `sqliteListRows`. */
export function sqliteList(items: readonly (string | number)[]): string {
  return JSON.stringify(items);
}
