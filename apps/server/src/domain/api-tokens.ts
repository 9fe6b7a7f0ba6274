import { DAY_MS } from './duration.js';

/**
 * API tokens people create for themselves (the API and Settings › API tokens in the console):
 * every one has a name and an expiry. The operator's `zekt token create` makes tokens without an
 * expiry; those are for the operator's scripts and are revoked by hand.
 */
export const MAX_TOKEN_NAME_LENGTH = 100;
/** A year and a day: a yearly rotation never finds its token already gone. */
export const MAX_TOKEN_LIFETIME_MS = 366 * DAY_MS;

/**
 * Whether `expiresAt` (an ISO 8601 time) is an expiry a new token may have at `now`.
 * @example tokenExpiry('2020-01-01T00:00:00Z', Date.now()) // { ok: false, reason: 'it is in the past …' }
 */
export function tokenExpiry(
  expiresAt: string,
  now: number,
): { ok: true; expiresAtMs: number } | { ok: false; reason: string } {
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(expiresAt)
    ? Date.parse(expiresAt)
    : Number.NaN;
  if (Number.isNaN(ms)) {
    return {
      ok: false,
      reason: `expiresAt must be an ISO 8601 time such as 2026-12-31T00:00:00Z (got ${JSON.stringify(expiresAt)})`,
    };
  }
  if (ms <= now)
    return { ok: false, reason: `expiresAt ${expiresAt} is in the past: a token must expire later` };
  if (ms - now > MAX_TOKEN_LIFETIME_MS) {
    return {
      ok: false,
      reason: `expiresAt ${expiresAt} is more than 366 days ahead: create a token for at most a year and rotate it`,
    };
  }
  return { ok: true, expiresAtMs: ms };
}

export function isExpired(expiresAt: number | null, now: number): boolean {
  return expiresAt !== null && expiresAt <= now;
}
