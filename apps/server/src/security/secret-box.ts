import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveKey } from './keys.js';

/**
 * Encrypts the secrets of the repository hooks Zekt places, so a copy of the database alone does
 * not let anyone forge webhooks. AES-256-GCM; the stored form is `v1.<iv>.<ciphertext>.<tag>`
 * (base64url), the version leaves room for key rotation.
 *
 * @example const box = createSecretBox(process.env.ZEKT_SECRET); box.open(box.seal('s3cret')) // 's3cret'
 */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

export function createSecretBox(secret: string): SecretBox {
  const key = deriveKey(secret, 'hook-secrets');
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
        throw new Error('a stored hook secret cannot be decrypted: was ZEKT_SECRET changed?', {
          cause: error,
        });
      }
    },
  };
}
