import { createHmac } from 'node:crypto';
import { deriveKey } from './keys.js';
import { sameSecret } from './same-secret.js';

/**
 * Per-delivery tokens: an HMAC over the delivery id, sent in
 * `client_payload.zekt.token`. It proves the bearer received that delivery and is valid only for
 * that delivery's confirm, complete and payload fetch. Nothing is stored: it is recomputed.
 */
export interface DeliveryTokens {
  issue(deliveryId: string): string;
  verify(deliveryId: string, token: string): boolean;
}

export function createDeliveryTokens(secret: string): DeliveryTokens {
  const key = deriveKey(secret, 'delivery-tokens');
  const issue = (deliveryId: string) =>
    `zdt_${createHmac('sha256', key).update(deliveryId).digest('base64url')}`;
  return {
    issue,
    verify: (deliveryId, token) => sameSecret(issue(deliveryId), token),
  };
}
