import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from '../schema.js';
import { classifyingDialect } from './classified-dialect.js';
import { namePreparedStatements } from './prepared-statements.js';

export interface PostgresOptions {
  url: string;
  /** Connections per process; every process of a deployment has its own pool. */
  poolSize?: number;
  /** Sees every statement (SQL and parameters) after it ran: query logging, plan checks. */
  onQuery?: (sql: string, parameters: readonly unknown[]) => void;
  /**
   * Statements are prepared with names, so each connection parses and plans them once
   * (prepared-statements.ts); false for a pooler that cannot keep them. Default true.
   */
  preparedStatements?: boolean;
  /** Told about every error a statement raised (already classified). */
  onError?: (error: unknown) => void;
}

/**
 * The PostgreSQL store. Timestamps and GitHub ids are `bigint` columns; node-postgres returns
 * int8 as strings by default (JavaScript numbers cannot hold every int8), but every value Zekt
 * stores — epoch milliseconds, GitHub ids, counters — is far below 2^53, so they are read as numbers,
 * like SQLite returns them. The parser is set on this pool's own type registry, not globally.
 */
export function openPostgres(options: PostgresOptions): {
  db: Kysely<Database>;
  pool: pg.Pool;
  close(): Promise<void>;
} {
  const types = new pg.TypeOverrides();
  types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  // sum() over integers yields numeric; counts and sums Zekt computes are small.
  types.setTypeParser(pg.types.builtins.NUMERIC, (value) => Number(value));
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    types,
    // Fail fast when the database is unreachable instead of queueing requests for minutes.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: 'zekt',
  });
  // A client losing its connection (database restart, network cut) emits 'error'; without a
  // listener that would crash the process. Idle clients report through the pool; a client checked
  // out by a transaction also fails its pending query, which is where the caller learns of it.
  pool.on('error', () => undefined);
  const prepare = options.preparedStatements === false ? null : namePreparedStatements();
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    prepare?.(client);
  });
  const onQuery = options.onQuery;
  const db = new Kysely<Database>({
    dialect: classifyingDialect(new PostgresDialect({ pool }), options.onError),
    ...(onQuery ? { log: (event) => onQuery(event.query.sql, event.query.parameters) } : {}),
  });
  return {
    db,
    pool,
    close: async () => {
      await db.destroy();
    },
  };
}
