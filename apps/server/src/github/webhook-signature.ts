import { isUtf8 } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Verifies `X-Hub-Signature-256` (`sha256=` + hex HMAC-SHA256 of the raw body) in constant time.
 * https://docs.github.com/webhooks/using-webhooks/validating-webhook-deliveries
 *
 * The HMAC covers the exact bytes GitHub sent, and is computed over them directly (no decoding and
 * re-encoding of a 25 MB body per request). A body that is not valid UTF-8 cannot be a GitHub
 * delivery and fails verification.
 *
 * @example await isValidSignature('s3cret', rawBody, req.headers['x-hub-signature-256'])
 */
export async function isValidSignature(
  secret: string,
  rawBody: Buffer,
  signature: string | undefined,
): Promise<boolean> {
  if (!secret || !signature?.startsWith('sha256=') || rawBody.length === 0) return false;
  if (!isUtf8(rawBody)) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Tries each candidate secret; returns the index of the one that signed the body, or -1. */
export async function findSigningSecret(
  secrets: readonly string[],
  rawBody: Buffer,
  signature: string | undefined,
): Promise<number> {
  for (let i = 0; i < secrets.length; i++) {
    if (await isValidSignature(secrets[i]!, rawBody, signature)) return i;
  }
  return -1;
}
