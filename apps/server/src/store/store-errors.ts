/**
 * Storage errors are classified here, once, so the rest of the code asks "was this a duplicate?"
 * instead of knowing SQLite's and PostgreSQL's error codes.
 */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // better-sqlite3: SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY; pg: 23505 unique_violation.
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

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
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is insecure|the database system is (starting up|shutting down)/i;

/**
 * Whether an error means "the database cannot be reached right now" (answered 503, retried by
 * workers) rather than a bug. Looks through the cause chain, where drivers put the socket error.
 */
export function isStoreUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth++) {
    if (current instanceof StoreUnavailableError) return true;
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
