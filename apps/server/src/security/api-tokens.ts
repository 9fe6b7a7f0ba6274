import { createHash, randomBytes } from 'node:crypto';

/**
 * API tokens: `zkt_` + 32 random bytes (base62-ish via base64url). Only the SHA-256 of a token is
 * stored; a token has 256 bits of entropy, so a plain hash is enough (no salt or slow hash
 * needed), and lookups by hash do not leak timing about the token itself.
 */
export const API_TOKEN_PREFIX = 'zkt_';

export function generateApiToken(): string {
  return API_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashApiToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function looksLikeApiToken(value: string): boolean {
  return /^zkt_[A-Za-z0-9_-]{43}$/.test(value);
}

/** A random webhook secret for a hook Zekt places (GitHub recommends high-entropy secrets). */
export function generateHookSecret(): string {
  return randomBytes(32).toString('hex');
}
