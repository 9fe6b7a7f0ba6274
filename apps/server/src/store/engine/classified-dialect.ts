import type { DatabaseConnection, Dialect, Driver, QueryResult } from 'kysely';
import { classifyDriverError } from '../store-errors.js';

/**
 * A Kysely dialect whose driver turns "the database cannot be reached" errors into
 * `StoreUnavailableError` where they happen: at the driver. Whether an error is an outage is then
 * decided once, by where it came from, never guessed later from a bare `ECONNRESET` that might as
 * well be a client hanging up.
 */
export function classifyingDialect(dialect: Dialect, onError?: (error: unknown) => void): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => classifyingDriver(dialect.createDriver(), onError ?? (() => undefined)),
  };
}

const originals = new WeakMap<DatabaseConnection, DatabaseConnection>();

type Classify = <T>(work: () => Promise<T>) => Promise<T>;

/** Runs a driver call, classifying what it throws and telling `onError` (the store-errors metric). */
function classifier(onError: (error: unknown) => void): Classify {
  return (work) =>
    work().catch((error: unknown) => {
      const classifiedError = classifyDriverError(error);
      onError(classifiedError);
      throw classifiedError;
    });
}

function wrapConnection(connection: DatabaseConnection, classified: Classify): DatabaseConnection {
  const wrapped: DatabaseConnection = {
    executeQuery: <R>(query: Parameters<DatabaseConnection['executeQuery']>[0]): Promise<QueryResult<R>> =>
      classified(() => connection.executeQuery<R>(query)),
    streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
  };
  originals.set(wrapped, connection);
  return wrapped;
}

const original = (connection: DatabaseConnection) => originals.get(connection) ?? connection;

function classifyingDriver(driver: Driver, onError: (error: unknown) => void): Driver {
  const classified = classifier(onError);
  const wrapped: Driver = {
    init: () => classified(() => driver.init()),
    acquireConnection: async () =>
      wrapConnection(await classified(() => driver.acquireConnection()), classified),
    beginTransaction: (connection, settings) =>
      classified(() => driver.beginTransaction(original(connection), settings)),
    commitTransaction: (connection) => classified(() => driver.commitTransaction(original(connection))),
    rollbackTransaction: (connection) => classified(() => driver.rollbackTransaction(original(connection))),
    releaseConnection: (connection) => driver.releaseConnection(original(connection)),
    destroy: () => driver.destroy(),
  };
  if (driver.savepoint) {
    const savepoint = driver.savepoint.bind(driver);
    wrapped.savepoint = (connection, name, compile) =>
      classified(() => savepoint(original(connection), name, compile));
  }
  if (driver.rollbackToSavepoint) {
    const rollback = driver.rollbackToSavepoint.bind(driver);
    wrapped.rollbackToSavepoint = (connection, name, compile) =>
      classified(() => rollback(original(connection), name, compile));
  }
  if (driver.releaseSavepoint) {
    const release = driver.releaseSavepoint.bind(driver);
    wrapped.releaseSavepoint = (connection, name, compile) =>
      classified(() => release(original(connection), name, compile));
  }
  return wrapped;
}
