import type { Config } from '../config.js';
import { redactUrl } from '../redact-url.js';
import { OperatorError } from './operator-error.js';

/**
 * The database mistakes an operator makes (a database or role that does not exist, a role without
 * the right to create Zekt's tables, a data directory Zekt may not write), recognised in a driver
 * error and turned into one line with the command that fixes it. Anything else is not explained
 * here (null): an outage is `store-errors.ts`'s, a bug keeps its stack.
 */
export function explainDatabaseFailure(error: unknown, database: Config['database']): OperatorError | null {
  for (const cause of causes(error)) {
    const explained =
      database.kind === 'postgres'
        ? explainPostgres(cause, database.url)
        : explainSqlite(cause, database.path);
    if (explained) return new OperatorError(explained.summary, explained.fix, { cause: error });
  }
  return null;
}

interface Explanation {
  summary: string;
  fix: string;
}

/** What a `postgres://` URL names, with PostgreSQL's own defaults for what it leaves out. */
export function postgresTarget(url: string) {
  const parsed = new URL(url);
  const user = decodeURIComponent(parsed.username) || 'postgres';
  return {
    host: parsed.hostname || 'localhost',
    port: parsed.port || '5432',
    user,
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || user,
  };
}

/** A name as PostgreSQL's SQL quotes it. */
function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function explainPostgres(error: unknown, url: string): Explanation | null {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof message !== 'string') return null;
  let target: ReturnType<typeof postgresTarget>;
  try {
    target = postgresTarget(url);
  } catch {
    return null;
  }
  const { host, port, user, database } = target;
  const at = `on ${host}:${port} (DATABASE_URL ${redactUrl(url)})`;
  const connect = `-h ${host} -p ${port}`;
  if (code === '3D000') {
    return {
      summary: `the database "${database}" does not exist ${at}`,
      fix: `create it: createdb ${connect} -O ${user} ${database} (as a PostgreSQL user allowed to create databases; in SQL: CREATE DATABASE ${ident(database)} OWNER ${ident(user)}), or correct the database name in DATABASE_URL`,
    };
  }
  if (code === '28000' && /role .* does not exist/.test(message)) {
    return {
      summary: `the role "${user}" does not exist ${at}`,
      fix: `create it as a PostgreSQL superuser: createuser ${connect} --login --pwprompt ${user} (in SQL: CREATE ROLE ${ident(user)} LOGIN PASSWORD '…'), then give it the database: ALTER DATABASE ${ident(database)} OWNER TO ${ident(user)}; or correct the user in DATABASE_URL`,
    };
  }
  if (
    code === '28000' ||
    code === '28P01' ||
    /password must be a string|password authentication failed/.test(message)
  ) {
    return {
      summary: `PostgreSQL refuses the login of "${user}" ${at}: ${message}`,
      fix: `put the role's password in DATABASE_URL (postgres://${user}:<password>@${host}:${port}/${database}), or allow the connection in pg_hba.conf`,
    };
  }
  if (code === '42501') {
    return {
      summary: `the role "${user}" may not create Zekt's tables in the database "${database}" ${at}: ${message}`,
      fix: `make it the database's owner, as a PostgreSQL superuser: psql ${connect} -c 'ALTER DATABASE ${ident(database)} OWNER TO ${ident(user)}' (or GRANT CREATE ON SCHEMA public TO ${ident(user)} in that database)`,
    };
  }
  if (code === '53300') {
    return {
      summary: `PostgreSQL has no connection left for Zekt ${at}: ${message}`,
      fix: "raise max_connections, or lower the other clients' pools",
    };
  }
  return null;
}

function explainSqlite(error: unknown, path: string): Explanation | null {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'string') return null;
  const where = `the embedded store ${path} (ZEKT_DATA_DIR)`;
  // A file-system error is the store's only when it is about the store's file or directories.
  const about = (error as { path?: unknown }).path;
  const fileSystem = code === 'EACCES' || code === 'EPERM' || code === 'EROFS';
  if (fileSystem && (typeof about !== 'string' || !path.startsWith(about))) return null;
  if (fileSystem || code === 'SQLITE_CANTOPEN') {
    return {
      summary: `cannot open ${where}: ${String(message)}`,
      fix: 'set ZEKT_DATA_DIR to a directory the user running zekt may write, or give that user the directory',
    };
  }
  if (code === 'SQLITE_READONLY' || code === 'SQLITE_READONLY_DIRECTORY') {
    return {
      summary: `${where} is read-only: ${String(message)}`,
      fix: 'give the user running zekt write access to the file and its directory (the -wal and -shm files live beside it)',
    };
  }
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return {
      summary: `${where} is not a SQLite database Zekt can read: ${String(message)}`,
      fix: 'point ZEKT_DATA_DIR at the directory of Zekt’s zekt.db, or restore the file from a backup',
    };
  }
  return null;
}

function* causes(error: unknown): Generator<unknown> {
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 8; depth++) {
    yield current;
    if (current instanceof AggregateError) yield* current.errors;
    current = (current as { cause?: unknown }).cause;
  }
}
