import { verify } from '@octokit/webhooks-methods';

/**
 * Verifies `X-Hub-Signature-256` (`sha256=` + hex HMAC-SHA256 of the raw body) in constant time.
 * https://docs.github.com/webhooks/using-webhooks/validating-webhook-deliveries
 *
 * The HMAC covers the exact bytes GitHub sent. `@octokit/webhooks-methods` takes a string, so the
 * body is decoded as UTF-8 only when that decoding is lossless; anything else cannot be a GitHub
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
  const text = rawBody.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(rawBody)) return false;
  return verify(secret, text, signature);
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
