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
 * A statement whose text starts with `REPLANNED` is prepared under a name that changes every
 * `replanMs` (10 s), and the previous one is deallocated. PostgreSQL keeps a named statement's
 * generic plan once it costs no more than the custom ones, and replans it only when the tables'
 * statistics change: a plan made while a table was nearly empty (a fresh database, or one whose
 * statistics autovacuum has not gathered yet) would stay a sequential scan of that table as it grows.
 * The statements shared by a group (engine/shared-statements.ts) join a JSON recordset of their
 * rows with a growing table by key, with `limit $n` (the row count) for the planner: a plan, custom
 * or generic, is never older than `replanMs`. They used to run unnamed, parsed and planned on every
 * run: that was a third of PostgreSQL's time in statements under `zekt bench` (its statement log:
 * 0.35–0.5 ms to parse and 0.4–0.6 ms to plan each call, against 1 ms to run it).
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
  /** How long a `REPLANNED` statement keeps one name (and so its plan) on a connection. */
  replanMs?: number;
}

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/** The start of a statement's text that PostgreSQL plans afresh at least every `replanMs`. */
export const REPLANNED = '/* replanned */ ';

/** How long a `REPLANNED` statement keeps its name by default. */
export const REPLAN_MS = 10_000;

const PLAN_CHANGED = /cached plan must not change result type/;
/** SQLSTATE 25P02: a statement sent into a transaction that already failed. */
const IN_FAILED_TRANSACTION = '25P02';

export function namePreparedStatements(
  options: PreparedStatementOptions = {},
): (client: pg.PoolClient) => void {
  const maxTexts = options.maxTexts ?? 1_000;
  const maxPerConnection = options.maxPerConnection ?? 500;
  const replanMs = options.replanMs ?? REPLAN_MS;
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
    // A REPLANNED text's name on this connection now, and names of earlier periods to deallocate.
    const current = new Map<string, string>();
    const stale: string[] = [];
    let naming = true;
    const replannedName = (base: string): string => {
      // performance.now() never goes back, so a name is never used again once deallocated.
      const name = `${base}_${Math.floor(performance.now() / replanMs)}`;
      const previous = current.get(base);
      if (previous !== name) {
        current.set(base, name);
        if (previous !== undefined && prepared.delete(previous)) stale.push(previous);
      }
      if (stale.length > 0) {
        // node-postgres records a name once PostgreSQL confirmed its Parse; only such a name is
        // deallocated, so a DEALLOCATE cannot abort the transaction it may run in (in one already
        // aborted it fails, and is sent again next time). The record goes after the DEALLOCATE:
        // statements queued before it still run under the name.
        const parsed = (client as unknown as { connection?: { parsedStatements?: Record<string, string> } })
          .connection?.parsedStatements;
        for (const old of stale.splice(0)) {
          if (parsed?.[old] === undefined) continue;
          (unnamed(`deallocate ${old}`) as Promise<unknown>).then(
            () => delete parsed[old],
            (error: { code?: string }) => {
              if (error.code === IN_FAILED_TRANSACTION) stale.push(old);
              else delete parsed[old];
            },
          );
        }
      }
      return name;
    };
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
        const base = nameOf(config);
        const name = base !== undefined && config.startsWith(REPLANNED) ? replannedName(base) : base;
        if (name !== undefined && (prepared.has(name) || prepared.size < maxPerConnection)) {
          prepared.add(name);
          return named(name, config, values);
        }
      }
      return unnamed(config, values, callback);
    };
  };
}
