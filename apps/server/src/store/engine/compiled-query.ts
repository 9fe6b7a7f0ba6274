import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';
import type { Database } from '../schema.js';
import { directRunOf } from './direct-run.js';

/**
 * A statement of the per-event hot path, built by Kysely once per dialect and then executed with
 * each call's parameters bound into the SQL compiled the first time.
 *
 * Kysely builds and compiles every query anew: immutable builder nodes, frozen, then walked into
 * SQL. For the dozen statements every webhook and every dispatch runs that was ~12 % of the
 * server's CPU under `zekt bench --compare` on SQLite (docs/performance.md), about as much as
 * better-sqlite3 spent running them. The SQL text never changes between calls, only the values.
 *
 * The builder is run once with a marker string in place of each named parameter; the compiled
 * parameters are then a template: a marker is replaced by the call's value, anything else (a
 * constant the builder wrote in) is kept. Kysely binds every value it is given as a parameter, so
 * the SQL is exactly what it would have built for real values. A builder must put parameters in
 * as values only (never through a function of them, never as a list whose length varies: a list is
 * one value, bound-lists.ts): the
 * first compilation checks that each named parameter landed as a bound value.
 */
export interface HotQuery<P, R> {
  execute(db: Kysely<Database>, params: P): Promise<QueryResult<R>>;
}

const MARK = '\u0000zekt-param:';

interface Template {
  compiled: CompiledQuery;
  /** Per bound parameter: the name of the call's value, or the constant compiled in. */
  slots: Array<{ name: string } | { value: unknown }>;
}

export function hotQuery<P extends Record<string, unknown>, R>(
  build: (db: Kysely<Database>, params: P) => Compilable<R>,
): HotQuery<P, R> {
  // Keyed by the dialect's adapter: one per Kysely instance and shared by its transactions, and
  // what decides the SQL (placeholders, quoting) of a store.
  const templates = new WeakMap<object, Template>();
  const compile = (db: Kysely<Database>, params: P): Template => {
    const names = new Set<string>();
    const markers = new Proxy({} as P, {
      get(_, name) {
        if (typeof name !== 'string') return undefined;
        names.add(name);
        return `${MARK}${name}`;
      },
    });
    const compiled = build(db, markers).compile();
    const bound = new Set<string>();
    const slots = compiled.parameters.map((value) => {
      if (typeof value === 'string' && value.includes(MARK)) {
        const name = value.slice(MARK.length);
        if (!value.startsWith(MARK) || !names.has(name))
          throw new Error(`hotQuery: a parameter was transformed, not bound: ${compiled.sql}`);
        bound.add(name);
        return { name };
      }
      return { value };
    });
    const unbound = [...new Set([...names, ...Object.keys(params)])].filter((name) => !bound.has(name));
    if (unbound.length > 0 || compiled.sql.includes(MARK))
      throw new Error(
        `hotQuery: ${unbound.join(', ') || 'a parameter'} not bound as a value: ${compiled.sql}`,
      );
    return { compiled, slots };
  };
  return {
    async execute(db, params) {
      const adapter = db.getExecutor().adapter;
      let template = templates.get(adapter);
      if (!template) {
        template = compile(db, params);
        templates.set(adapter, template);
      }
      const parameters = template.slots.map((slot) => {
        if (!('name' in slot)) return slot.value;
        const value = params[slot.name];
        // Kysely would have left an undefined value out of the SQL, which is no longer an option.
        if (value === undefined)
          throw new Error(`hotQuery: ${slot.name} is undefined: ${template.compiled.sql}`);
        return value;
      });
      return executeCompiled<R>(db, template.compiled, parameters);
    },
  };
}

/**
 * Compiled SQL run with these parameters: on the native connection while a group commit holds
 * `db` (direct-run.ts), through Kysely's executor otherwise.
 */
export async function executeCompiled<R>(
  db: Kysely<Database>,
  compiled: CompiledQuery,
  parameters: readonly unknown[],
): Promise<QueryResult<R>> {
  const direct = directRunOf(db);
  if (direct) return direct(compiled.sql, parameters) as QueryResult<R>;
  return db.executeQuery<R>({ ...compiled, parameters } as CompiledQuery<R>);
}

/**
 * Hot queries whose SQL has a shape: how many rows it inserts, which columns it writes. One is
 * compiled per shape (by `key`) and kept for the life of the process, so the shapes must be few: an
 * event routes to a handful of subscriptions, and the columns an update writes come from a handful
 * of outcomes. A list a statement reads is no shape: it is bound as one parameter (bound-lists.ts).
 */
export function hotQueryFamily<S, P extends Record<string, unknown>, R>(
  key: (shape: S) => string | number,
  build: (shape: S) => (db: Kysely<Database>, params: P) => Compilable<R>,
): (shape: S) => HotQuery<P, R> {
  const queries = new Map<string | number, HotQuery<P, R>>();
  return (shape) => {
    const k = key(shape);
    let query = queries.get(k);
    if (!query) {
      query = hotQuery(build(shape));
      queries.set(k, query);
    }
    return query;
  };
}
