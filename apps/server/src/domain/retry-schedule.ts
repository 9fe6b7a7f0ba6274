import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from './duration.js';

/**
 * When to try a failed dispatch again. The schedule is data: the n-th retry waits
 * `schedule[n]`, with ±20 % jitter so deliveries that failed together do not retry together.
 * GitHub's own instructions (`Retry-After`, or `x-ratelimit-reset` once the quota is spent) win
 * over the schedule when they ask for longer, capped at 24 h.
 * https://docs.github.com/rest/using-the-rest-api/best-practices-for-using-the-rest-api#handle-rate-limit-errors-appropriately
 */
export const DEFAULT_RETRY_SCHEDULE_MS = [
  0,
  10 * SECOND_MS,
  MINUTE_MS,
  5 * MINUTE_MS,
  30 * MINUTE_MS,
  2 * HOUR_MS,
  6 * HOUR_MS,
  12 * HOUR_MS,
  DAY_MS,
] as const;

export const MAX_RETRY_DELAY_MS = DAY_MS;
export const JITTER_RATIO = 0.2;

export interface RetryInput {
  /** Attempts made so far, including the one that just failed (1 after the first failure). */
  attemptsMade: number;
  now: number;
  schedule?: readonly number[];
  /** Response headers of the failed attempt, lower-case. */
  headers?: Record<string, string | undefined> | undefined;
  /** A number in [0, 1); injected so tests are deterministic. */
  random?: () => number;
}

/**
 * The time of the next attempt, or null when the schedule is exhausted. Attempt 1 is the initial
 * dispatch (`schedule[0]`, usually 0), so after `attemptsMade` attempts the next delay is
 * `schedule[attemptsMade]`.
 *
 * @example nextAttemptAt({ attemptsMade: 1, now: 0, random: () => 0.5 }) // 10_000
 */
export function nextAttemptAt(input: RetryInput): number | null {
  const schedule = input.schedule ?? DEFAULT_RETRY_SCHEDULE_MS;
  const base = schedule[input.attemptsMade];
  if (base === undefined) return null;
  const random = input.random ?? Math.random;
  const jittered = base * (1 - JITTER_RATIO + 2 * JITTER_RATIO * random());
  const asked = requestedDelayMs(input.headers ?? {}, input.now);
  const delay = Math.min(MAX_RETRY_DELAY_MS, Math.max(jittered, asked ?? 0));
  return input.now + Math.round(delay);
}

/** The wait GitHub asked for: `Retry-After` seconds, or until `x-ratelimit-reset` when none remain. */
export function requestedDelayMs(headers: Record<string, string | undefined>, now: number): number | null {
  const retryAfter = headers['retry-after'];
  if (retryAfter !== undefined) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const date = Date.parse(retryAfter);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  if (headers['x-ratelimit-remaining'] === '0') {
    const reset = Number(headers['x-ratelimit-reset']);
    if (Number.isFinite(reset)) return Math.max(0, reset * 1000 - now);
  }
  return null;
}

/** GitHub will answer the same way again: 404 (repo gone / App not installed) and 422 (rejected). */
export function isPermanentFailure(status: number | undefined): boolean {
  return status === 404 || status === 422;
}
