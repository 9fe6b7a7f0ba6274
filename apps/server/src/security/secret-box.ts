import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveKey } from './keys.js';

/**
 * Encrypts secrets Zekt keeps in its store: the secrets of the repository hooks it places, and
 * the GitHub App registered through setup (each with a key of its own), so a copy of the database
 * alone lets nobody forge webhooks or act as the App. AES-256-GCM; the stored form is
 * `v1.<iv>.<ciphertext>.<tag>` (base64url), the version leaves room for key rotation.
 *
 * @example const box = createSecretBox(process.env.ZEKT_SECRET); box.open(box.seal('s3cret')) // 's3cret'
 */
export type SealedSecretPurpose = 'hook-secrets' | 'app-credentials';

const WHAT: Record<SealedSecretPurpose, string> = {
  'hook-secrets': 'a stored hook secret',
  'app-credentials': 'the GitHub App registered through setup',
};

export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

export function createSecretBox(secret: string, purpose: SealedSecretPurpose = 'hook-secrets'): SecretBox {
  const key = deriveKey(secret, purpose);
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv, ciphertext, cipher.getAuthTag()]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    open(sealed) {
      const [version, iv, ciphertext, tag] = sealed.split('.');
      if (version !== 'v1' || iv === undefined || ciphertext === undefined || tag === undefined) {
        throw new Error('sealed secret has an unknown format');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      try {
        return Buffer.concat([
          decipher.update(Buffer.from(ciphertext, 'base64url')),
          decipher.final(),
        ]).toString('utf8');
      } catch (error) {
        throw new Error(`${WHAT[purpose]} cannot be decrypted: was ZEKT_SECRET changed?`, {
          cause: error,
        });
      }
    },
  };
}
