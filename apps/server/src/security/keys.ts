import { hkdfSync } from 'node:crypto';

/**
 * `ZEKT_SECRET` is never used directly: each purpose gets its own key derived with HKDF, so a
 * key leaked from one use (say, a delivery-token MAC) says nothing about another (hook secrets).
 */
export type KeyPurpose = 'hook-secrets' | 'app-credentials' | 'setup-code' | 'delivery-tokens' | 'sessions';

export function deriveKey(secret: string, purpose: KeyPurpose): Buffer {
  return Buffer.from(
    hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), `zekt:${purpose}:v1`, 32),
  );
}
