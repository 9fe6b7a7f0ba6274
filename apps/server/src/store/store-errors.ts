/**
 * Storage errors are classified here, once, so the rest of the code asks "was this a duplicate?"
 * instead of knowing SQLite's and PostgreSQL's error codes.
 */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // better-sqlite3: SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY; pg: 23505 unique_violation.
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/**
 * The database refused a value it cannot store (PostgreSQL: a NUL character in text, invalid
 * UTF-8): the caller's input, answered 400, never a 500.
 */
export class StoreRejectedValueError extends Error {
  override readonly name = 'StoreRejectedValueError';
}

/** PostgreSQL: character_not_in_repertoire, untranslatable_character. */
const REJECTED_VALUE_CODES = new Set(['22021', '22P05']);

/**
 * PostgreSQL ended this transaction to resolve a conflict with a concurrent one: a deadlock it
 * broke (40P01) or a serialization failure (40001). Nothing of the transaction was kept, and the
 * same request succeeds when sent again, so it is answered 503 with `Retry-After` (problem code
 * `store_conflict`) and workers retry their pass, never a 500. Zekt's transactions take their
 * locks in one order (architecture.md, item 8) precisely so that this stays rare; it is classified
 * so that an ordering nobody foresaw costs a retry, not an unexplained error.
 *
 * Not retried inside the store: a transaction's work may hand deliveries to the dispatcher
 * (delivery/handoff.ts), and only the caller knows how to undo that for a second attempt.
 */
export class StoreConflictError extends Error {
  override readonly name = 'StoreConflictError';
}

/** PostgreSQL: deadlock_detected, serialization_failure. */
const CONFLICT_CODES = new Set(['40P01', '40001']);

/** The store cannot be reached (database down, connection lost). Answered with 503. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

const UNAVAILABLE_CODES = new Set([
  // Node: the database host does not answer.
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'EPIPE',
  // PostgreSQL: connection exceptions (class 08) and the server shutting down (57P01–57P03).
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  // SQLite: the file stayed locked longer than busy_timeout.
  'SQLITE_BUSY',
]);
// The last: inside a transaction, a prepared statement met a schema another process migrated
// meanwhile (prepared-statements.ts); run again, the statement goes unnamed.
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is insecure|the database system is (starting up|shutting down)|cached plan must not change result type/i;

/** A driver error that means the database cannot be reached: looks through the cause chain. */
function looksUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Classifies an error thrown by the database driver (classified-dialect.ts calls it for every
 * driver call): an outage becomes a `StoreUnavailableError`, a value the database cannot store a
 * `StoreRejectedValueError`, a conflict PostgreSQL broke between concurrent transactions a
 * `StoreConflictError` (each with the driver's error as cause); anything else passes unchanged.
 * Only errors that come from the driver are looked at, so a socket error of some other origin (a
 * client hanging up) is never mistaken for the database.
 */
export function classifyDriverError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && REJECTED_VALUE_CODES.has(code)) {
    return new StoreRejectedValueError(
      `the database cannot store a value of the request: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  if (typeof code === 'string' && CONFLICT_CODES.has(code)) {
    return new StoreConflictError(
      `the database ended this transaction to resolve a conflict with a concurrent one: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (error instanceof StoreUnavailableError || !looksUnavailable(error)) return error;
  return new StoreUnavailableError(
    `the database cannot be reached: ${(error as Error)?.message ?? String(error)}`,
    {
      cause: error,
    },
  );
}

/**
 * Whether an error means "the database cannot be reached right now" (answered 503, retried by
 * workers) rather than a bug: a `StoreUnavailableError` anywhere in its cause chain.
 */
export function isStoreUnavailable(error: unknown): boolean {
  return inCauseChain(error, StoreUnavailableError);
}

function inCauseChain(error: unknown, kind: new (...args: never[]) => Error): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 8; depth++) {
    if (current instanceof kind) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** Whether an error is a conflict the database broke (a `StoreConflictError` in its cause chain). */
export function isStoreConflict(error: unknown): boolean {
  return inCauseChain(error, StoreConflictError);
}

/** The classes of store errors the operator's metrics count (docs/operations.md, *Metrics*). */
export type StoreErrorCategory = 'unavailable' | 'conflict' | 'rejected_value' | 'unique_violation' | 'other';

export function storeErrorCategory(error: unknown): StoreErrorCategory {
  if (isStoreUnavailable(error)) return 'unavailable';
  if (isStoreConflict(error)) return 'conflict';
  if (error instanceof StoreRejectedValueError) return 'rejected_value';
  if (isUniqueViolation(error)) return 'unique_violation';
  return 'other';
}
