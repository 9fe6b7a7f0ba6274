import { sql } from 'kysely';
import type { Store } from '../../src/store/store.js';

/**
 * The schema of a migrated database as stable text: what the migrations produce, in an order that
 * depends on names only, without Kysely's own bookkeeping tables. Compared with the committed dump
 * (apps/server/src/store/schema/*.sql) by test/schema-dump.test.ts.
 */
export async function dumpSchema(store: Store): Promise<string> {
  return store.dialect === 'postgres' ? dumpPostgres(store) : dumpSqlite(store);
}

async function dumpSqlite(store: Store): Promise<string> {
  const { rows } = await sql<{ type: string; name: string; sql: string }>`
    select type, name, sql from sqlite_master
    where sql is not null and name not like 'sqlite_%' and name not like 'kysely_%'
    order by case type when 'table' then 0 when 'index' then 1 else 2 end, name`.execute(store.db);
  return `${rows.map((row) => `${normalise(row.sql)};`).join('\n\n')}\n`;
}

async function dumpPostgres(store: Store): Promise<string> {
  const { rows: columns } = await sql<{
    table_name: string;
    column_name: string;
    data_type: string;
    is_nullable: string;
    column_default: string | null;
  }>`
    select table_name, column_name, data_type, is_nullable, column_default
    from information_schema.columns
    where table_schema = 'public' and table_name not like 'kysely_%'
    order by table_name, column_name`.execute(store.db);
  const { rows: constraints } = await sql<{ table_name: string; name: string; definition: string }>`
    select rel.relname as table_name, con.conname as name, pg_get_constraintdef(con.oid) as definition
    from pg_constraint con
    join pg_class rel on rel.oid = con.conrelid
    join pg_namespace ns on ns.oid = rel.relnamespace
    where ns.nspname = 'public' and rel.relname not like 'kysely_%'
    order by rel.relname, con.conname`.execute(store.db);
  const { rows: indexes } = await sql<{ tablename: string; indexname: string; indexdef: string }>`
    select tablename, indexname, indexdef from pg_indexes
    where schemaname = 'public' and tablename not like 'kysely_%'
    order by tablename, indexname`.execute(store.db);
  // Storage parameters (a fillfactor) shape how updates are written, so a change shows in review.
  const { rows: options } = await sql<{ table_name: string; options: string }>`
    select rel.relname as table_name, array_to_string(rel.reloptions, ', ') as options
    from pg_class rel
    join pg_namespace ns on ns.oid = rel.relnamespace
    where ns.nspname = 'public' and rel.relkind = 'r' and rel.reloptions is not null`.execute(store.db);
  // Functions a statement relies on (migration 0018's `zekt_rows`): their definition, its row
  // estimate included, is part of the schema.
  const { rows: functions } = await sql<{ definition: string }>`
    select pg_get_functiondef(p.oid) as definition
    from pg_proc p
    join pg_namespace ns on ns.oid = p.pronamespace
    where ns.nspname = 'public'
    order by p.proname, p.oid`.execute(store.db);
  const tables = [...new Set(columns.map((column) => column.table_name))].sort();
  const blocks = tables.map((table) => {
    const lines = [
      ...columns
        .filter((column) => column.table_name === table)
        .map(
          (column) =>
            `  ${column.column_name} ${column.data_type}${column.is_nullable === 'NO' ? ' not null' : ''}${
              column.column_default === null ? '' : ` default ${column.column_default}`
            }`,
        ),
      ...constraints
        .filter((constraint) => constraint.table_name === table)
        .map((constraint) => `  constraint ${constraint.name} ${constraint.definition}`),
    ];
    const tableIndexes = indexes
      .filter((index) => index.tablename === table)
      .map((index) => `${index.indexdef};`);
    const storage = options
      .filter((option) => option.table_name === table)
      .map((option) => `alter table ${table} set (${option.options});`);
    return [`table ${table} (\n${lines.join(',\n')}\n);`, ...storage, ...tableIndexes].join('\n');
  });
  const definitions = functions.map((fn) => `${normalise(fn.definition)};`);
  return `${[...blocks, ...definitions].join('\n\n')}\n`;
}

/** One statement per line group, without the indentation and blank lines of the migration's source. */
function normalise(statement: string): string {
  return statement
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join('\n');
}
