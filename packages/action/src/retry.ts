/**
 * When a call to Zekt is tried again, and after how long. Retrying is safe for every call the
 * action makes: a second message for the same run replaces the first, a second confirm only counts
 * an attempt, a second complete answers 409 `already_final` (which the step accepts), and the
 * payload fetch is a GET.
 */

/** Four attempts: with the default base delay of 1 s, they span about 7 s. */
export const MAX_ATTEMPTS = 4;

/** A `Retry-After` longer than this is not waited for: the step would rather fail and say so. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * 5xx (the service or a proxy in front of it is failing) and 429 (slow down) are transient; every
 * other status is an answer: 4xx will not change by asking again.
 *
 * @example isTransientStatus(503) // true
 */
export function isTransientStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/**
 * The wait before attempt `attempt + 1`: exponential (`base`, `2·base`, `4·base`, …) with ±20 %
 * jitter, so many workflows cut off by the same outage do not come back in lockstep; a
 * `Retry-After` (seconds or an HTTP date) is honoured when longer, up to 60 s.
 *
 * @example retryDelayMs({ attempt: 2, baseDelayMs: 1000, random: () => 0.5 }) // 2000
 */
export function retryDelayMs(options: {
  attempt: number;
  baseDelayMs: number;
  retryAfter?: string | undefined;
  now?: number;
  random?: () => number;
}): number {
  const random = options.random ?? Math.random;
  const exponential = options.baseDelayMs * 2 ** (options.attempt - 1);
  const jittered = Math.round(exponential * (0.8 + 0.4 * random()));
  const requested = parseRetryAfterMs(options.retryAfter, options.now ?? Date.now());
  return requested === undefined ? jittered : Math.max(jittered, Math.min(requested, MAX_RETRY_AFTER_MS));
}

/**
 * `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date (RFC 9110 10.2.3).
 *
 * @example parseRetryAfterMs('3', 0) // 3000
 */
export function parseRetryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  // An HTTP date names its weekday and month; anything else (a negative number…) is not one.
  if (!/[A-Za-z]/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
