import type { WebhookDeliveryRecord } from '../types.js';

/**
 * GitHub's words for how a delivery went: `OK`, `Invalid HTTP Response: 401` (any answer outside
 * 2xx, with its status code), or, with `status_code` 0, why no answer came: `timed out` after its
 * 10 seconds, `failed to connect` for everything that never reached a server (refused, reset, no
 * such host). The simulator's record keeps Node's own reason (`error`) for its control API.
 */
function statusText(delivery: WebhookDeliveryRecord): string {
  if (delivery.status === null) {
    const error = delivery.error ?? '';
    if (error.startsWith('timed out')) return 'timed out';
    if (error === 'no webhook URL' || error === 'simulator closed') return error;
    return 'failed to connect';
  }
  return delivery.status >= 200 && delivery.status < 300 ? 'OK' : `Invalid HTTP Response: ${delivery.status}`;
}

function idOf(payload: unknown, field: 'installation' | 'repository'): number | null {
  const value = (payload as Record<string, unknown> | null)?.[field] as { id?: unknown } | undefined;
  return typeof value?.id === 'number' ? value.id : null;
}

/**
 * A delivery as `GET …/hooks/{hook_id}/deliveries` lists it ("Simple webhook delivery"). A
 * delivery that got no answer has `status_code` 0.
 * https://docs.github.com/rest/repos/webhooks#list-deliveries-for-a-repository-webhook
 */
export function hookDeliveryItemPayload(delivery: WebhookDeliveryRecord) {
  return {
    id: delivery.id,
    guid: delivery.guid,
    delivered_at: delivery.deliveredAt,
    redelivery: delivery.redelivery,
    duration: delivery.durationMs / 1000,
    status: statusText(delivery),
    status_code: delivery.status ?? 0,
    event: delivery.event,
    action: delivery.action,
    installation_id: idOf(delivery.payload, 'installation'),
    repository_id: idOf(delivery.payload, 'repository'),
    throttled_at: null,
  };
}

/** One delivery with its request and response ("Webhook delivery"). */
export function hookDeliveryPayload(delivery: WebhookDeliveryRecord) {
  return {
    ...hookDeliveryItemPayload(delivery),
    url: delivery.url ?? '',
    request: { headers: delivery.requestHeaders, payload: delivery.payload as Record<string, unknown> },
    response: { headers: {}, payload: delivery.responseBody },
  };
}
