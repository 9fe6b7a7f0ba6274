/**
 * Error categories of failed dispatch attempts, stored on every attempt and grouped by
 * diagnostics.
 */
export const ERROR_CATEGORIES = [
  'service_unavailable',
  'timeout',
  'auth',
  'rate_limited',
  'network',
  'not_found',
  'rejected',
  'other',
] as const;
export type ErrorCategory = (typeof ERROR_CATEGORIES)[number];

export interface AttemptFailure {
  /** HTTP status when GitHub answered. */
  status?: number | undefined;
  /** Lower-case response headers. */
  headers?: Record<string, string | undefined> | undefined;
  /** Response message (GitHub's `message`), used to spot secondary rate limits. */
  message?: string | undefined;
  /** Node/undici error code when no response came (`ECONNRESET`, `ENOTFOUND`, …) or 'TIMEOUT'. */
  errorCode?: string | undefined;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
const TIMEOUT_CODES = new Set([
  'TIMEOUT',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * GitHub answers a primary rate limit with 403 or 429 and `x-ratelimit-remaining: 0`, and a
 * secondary rate limit with 403/429 and a message about it (often with `retry-after`).
 * https://docs.github.com/rest/using-the-rest-api/troubleshooting-the-rest-api#rate-limit-errors
 */
export function isRateLimited(failure: AttemptFailure): boolean {
  if (failure.status === 429) return true;
  if (failure.status !== 403) return false;
  const headers = failure.headers ?? {};
  if (headers['x-ratelimit-remaining'] === '0') return true;
  if (headers['retry-after'] !== undefined) return true;
  return /rate limit/i.test(failure.message ?? '');
}

/** @example categorizeFailure({ status: 503 }) // 'service_unavailable' */
export function categorizeFailure(failure: AttemptFailure): ErrorCategory {
  if (failure.status !== undefined) {
    if (isRateLimited(failure)) return 'rate_limited';
    if (failure.status === 401 || failure.status === 403) return 'auth';
    if (failure.status === 404) return 'not_found';
    if (failure.status === 422) return 'rejected';
    if (failure.status === 408 || failure.status === 504) return 'timeout';
    if (failure.status >= 500) return 'service_unavailable';
    return 'other';
  }
  if (failure.errorCode !== undefined) {
    if (TIMEOUT_CODES.has(failure.errorCode)) return 'timeout';
    if (NETWORK_CODES.has(failure.errorCode)) return 'network';
  }
  return 'other';
}
