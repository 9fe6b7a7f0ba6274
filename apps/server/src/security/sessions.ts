import { createHash, randomBytes } from 'node:crypto';
import { HOUR_MS, MINUTE_MS } from '../domain/duration.js';

/**
 * Console sessions and the OAuth `state`: random values with 256 bits of entropy. The browser
 * holds the session value in a cookie; the store keeps only its SHA-256 (as for API tokens).
 */
export const SESSION_LIFETIME_MS = 12 * HOUR_MS;
export const OAUTH_STATE_LIFETIME_MS = 10 * MINUTE_MS;

export function generateSessionValue(): string {
  return `zks_${randomBytes(32).toString('base64url')}`;
}

export function hashSessionValue(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export function looksLikeSessionValue(value: string): boolean {
  return /^zks_[A-Za-z0-9_-]{43}$/.test(value);
}

export function generateOAuthState(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Cookie names. Over https the session cookie takes the `__Host-` prefix: browsers then accept it
 * only when Secure, for path `/` and without a Domain, so no sibling host can plant or widen it.
 */
export function cookieNames(secure: boolean): { session: string; state: string } {
  return secure
    ? { session: '__Host-zekt_session', state: '__Host-zekt_oauth' }
    : { session: 'zekt_session', state: 'zekt_oauth' };
}
