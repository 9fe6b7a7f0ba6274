import { createHash, createHmac, randomBytes } from 'node:crypto';
import { HOUR_MS } from '../domain/duration.js';
import { deriveKey } from './keys.js';
import { sameSecret } from './same-secret.js';

/**
 * The secrets of setup mode (registering the GitHub App from a manifest):
 *
 * - The **setup code** is the HMAC (key derived from `ZEKT_SECRET`) of a random nonce kept in the
 *   store. Every process holding the store and `ZEKT_SECRET` computes the same code, so `zekt serve`
 *   and `zekt setup` print the same URL, again and again, across restarts; without `ZEKT_SECRET`
 *   the nonce alone says nothing. The nonce is deleted once an App is registered: the code then
 *   opens nothing, even if the App is later removed.
 * - A **setup session** is a random cookie value a browser gets for presenting the code; the store
 *   keeps its SHA-256.
 * - A manifest flow's **state** is 256 random bits bound to the setup session, kept as SHA-256,
 *   used once, valid for an hour (GitHub's manifest codes live an hour too).
 */
export const SETUP_SESSION_LIFETIME_MS = 2 * HOUR_MS;
export const SETUP_STATE_LIFETIME_MS = HOUR_MS;

export function generateSetupCodeNonce(): string {
  return randomBytes(32).toString('base64url');
}

/** The setup code of a nonce: 43 base64url characters (256 bits). */
export function setupCodeFrom(secret: string, nonce: string): string {
  return createHmac('sha256', deriveKey(secret, 'setup-code')).update(nonce, 'utf8').digest('base64url');
}

/** Whether `candidate` is the setup code, compared in constant time. */
export function isSetupCode(secret: string, nonce: string, candidate: string): boolean {
  return sameSecret(setupCodeFrom(secret, nonce), candidate);
}

export function generateSetupSessionValue(): string {
  return `zss_${randomBytes(32).toString('base64url')}`;
}

export function looksLikeSetupSessionValue(value: string): boolean {
  return /^zss_[A-Za-z0-9_-]{43}$/.test(value);
}

export function generateSetupState(): string {
  return randomBytes(32).toString('base64url');
}

/** What the store keeps of a setup session or state. */
export function hashSetupValue(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** The setup session's cookie; over https `__Host-` keeps sibling hosts from planting or widening it. */
export function setupCookieName(secure: boolean): string {
  return secure ? '__Host-zekt_setup' : 'zekt_setup';
}
