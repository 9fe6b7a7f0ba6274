import type pg from 'pg';

/**
 * Named prepared statements on PostgreSQL. node-postgres sends a query without a name
 * as the unnamed statement, which the server parses, analyses and plans again on every run: under
 * the bench's load that was half of PostgreSQL's CPU per event (perf: `raw_parser`,
 * `parse_analyze`, `standard_planner`). With a name, a connection parses a statement once, and
 * after five runs PostgreSQL may keep its generic plan (`plan_cache_mode = auto` decides, per
 * statement, from the plans' costs). Side by side, PostgreSQL's CPU per event fell by ~40 % and
 * durable throughput rose by ~18 % (docs/performance.md).
 *
 * The name belongs to the SQL text, so it is the same on every connection, and is given out only
 * while a bounded number of texts has one: the texts Zekt sends are a fixed set, but a text built
 * with a variable number of placeholders (`in (…)` of a list) is a new one for each length, and
 * must not grow the server's memory or this map without end. Past either bound a statement runs
 * unnamed, as before.
 *
 * A prepared statement keeps its generic plan as long as the tables' statistics stand, so a text
 * must not leave its plan to the table's size: the statements shared by a group join their rows,
 * a JSON parameter, with a table by its key, and read them with `zekt_rows` (migration 0018),
 * which the planner takes for one row; PostgreSQL's own recordset functions, taken for 100 rows,
 * made a plan that read the whole table while it was small, and kept it as the table grew.
 *
 * Two cases where a name is wrong:
 * - a pooler between Zekt and PostgreSQL that does not keep prepared statements across
 *   transactions (PgBouncer before 1.21 in transaction mode, or with `max_prepared_statements =
 *   0`): `ZEKT_DATABASE_PREPARED_STATEMENTS=false` turns names off (docs/configuration.md);
 * - another process migrated the schema meanwhile (a rolling upgrade): a prepared statement whose
 *   result columns changed fails with "cached plan must not change result type". The connection
 *   then stops naming (so each connection fails at most once); a statement that failed outside a
 *   transaction is run again unnamed, and one inside a transaction fails it as "store unavailable"
 *   (store-errors.ts: 503 to a request, retried by the workers).
 */
export interface PreparedStatementOptions {
  /** Distinct SQL texts given a name, process-wide. */
  maxTexts?: number;
  /** Statements one connection prepares. */
  maxPerConnection?: number;
}

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

const PLAN_CHANGED = /cached plan must not change result type/;

export function namePreparedStatements(
  options: PreparedStatementOptions = {},
): (client: pg.PoolClient) => void {
  const maxTexts = options.maxTexts ?? 1_000;
  const maxPerConnection = options.maxPerConnection ?? 500;
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text);
    if (name === undefined && names.size < maxTexts) {
      name = `zekt_${names.size}`;
      names.set(text, name);
    }
    return name;
  };
  return (client) => {
    const unnamed = client.query.bind(client) as Query;
    const prepared = new Set<string>();
    let naming = true;
    const named = async (name: string, text: string, values: unknown[]): Promise<unknown> => {
      try {
        return await unnamed({ name, text, values });
      } catch (error) {
        if (!PLAN_CHANGED.test((error as Error).message ?? '')) throw error;
        naming = false;
        if (client.getTransactionStatus() !== 'I') throw error;
        return unnamed(text, values);
      }
    };
    (client as unknown as { query: Query }).query = (config, values, callback) => {
      // Kysely's only call: query(text, values), awaited. Anything else is left as it was.
      if (naming && typeof config === 'string' && Array.isArray(values) && callback === undefined) {
        const name = nameOf(config);
        if (name !== undefined && (prepared.has(name) || prepared.size < maxPerConnection)) {
          prepared.add(name);
          return named(name, config, values);
        }
      }
      return unnamed(config, values, callback);
    };
  };
}
