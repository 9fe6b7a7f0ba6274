import { createHmac } from 'node:crypto';

/**
 * The two signature headers GitHub adds when a hook has a secret: HMAC-SHA256 (and the legacy
 * HMAC-SHA1) of the exact body bytes, hex encoded.
 * https://docs.github.com/webhooks/using-webhooks/validating-webhook-deliveries
 */
export function signatureHeaders(secret: string, body: string): Record<string, string> {
  return {
    'X-Hub-Signature': `sha1=${createHmac('sha1', secret).update(body, 'utf8').digest('hex')}`,
    'X-Hub-Signature-256': `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`,
  };
}
