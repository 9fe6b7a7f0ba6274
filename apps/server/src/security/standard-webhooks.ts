import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com, spec/standard-webhooks.md): the
 * secret is `whsec_` + base64 of the key; the signature is `v1,` + base64 of HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`. Receivers verify with any Standard Webhooks library.
 */
const PREFIX = 'whsec_';

/** The key inside a `whsec_…` secret, or null when it is not one (at least 24 bytes). */
export function parseWebhookSecret(secret: string): Buffer | null {
  if (!secret.startsWith(PREFIX)) return null;
  const encoded = secret.slice(PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return null;
  const key = Buffer.from(encoded, 'base64');
  return key.length >= 24 ? key : null;
}

/**
 * The three headers of a signed message.
 * @example signedHeaders(key, 'alert_1', 1700000000, '{}')['webhook-signature'] // 'v1,…'
 */
export function signedHeaders(
  key: Buffer,
  id: string,
  timestampSeconds: number,
  body: string,
): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  const signature = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}
