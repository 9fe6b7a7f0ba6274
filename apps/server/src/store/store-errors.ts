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
