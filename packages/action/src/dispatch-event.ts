import { readFileSync } from 'node:fs';

/**
 * What a consumer step needs from the `repository_dispatch` that started its run:
 * `github.event.client_payload.zekt` (SPEC 4), read from the event file at `GITHUB_EVENT_PATH`.
 */
export interface ZektDelivery {
  /** The provider's run id; sent back as it came (string or number). */
  correlationId: string | number;
  deliveryId?: string;
  /** The per-delivery token; durable deliveries only. */
  token?: string;
  /** W3C trace context of the dispatch, when the Zekt service traces (step-trace.ts). */
  traceparent?: string;
  message: InlineMessage | ReferencedMessage | NoMessage;
}

export interface InlineMessage {
  kind: 'inline';
  payload: unknown;
}

export interface ReferencedMessage {
  kind: 'reference';
  url: string;
  bytes?: number;
}

export interface NoMessage {
  kind: 'none';
}

export type DeliveryResult = { ok: true; delivery: ZektDelivery } | { ok: false; problem: string };

const NOT_A_DISPATCH =
  'this step must run in a workflow started by a Zekt delivery (on: repository_dispatch), whose github.event.client_payload.zekt';

/** Reads and checks the event file. */
export function loadDelivery(eventPath: string | undefined): DeliveryResult {
  if (!eventPath)
    return { ok: false, problem: 'GITHUB_EVENT_PATH is not set: this step must run in a GitHub Actions job' };
  let event: unknown;
  try {
    event = JSON.parse(readFileSync(eventPath, 'utf8'));
  } catch (error) {
    return { ok: false, problem: `could not read the event file ${eventPath}: ${(error as Error).message}` };
  }
  return readDelivery(event);
}

/**
 * Extracts the delivery from a `repository_dispatch` event (`github.event`).
 *
 * @example readDelivery({ action: 'acme-deployed', client_payload: { zekt: { correlationId: '42', deliveryId: 'delivery-…' } } })
 */
export function readDelivery(event: unknown): DeliveryResult {
  const clientPayload = isObject(event) ? event.client_payload : undefined;
  const zekt = isObject(clientPayload) ? clientPayload.zekt : undefined;
  if (!isObject(zekt)) return { ok: false, problem: `${NOT_A_DISPATCH} is missing` };
  const { correlationId, deliveryId, token } = zekt;
  if (!(typeof correlationId === 'string' && correlationId !== '') && !Number.isSafeInteger(correlationId)) {
    return { ok: false, problem: `${NOT_A_DISPATCH}.correlationId is missing or not a run id` };
  }
  if (deliveryId !== undefined && typeof deliveryId !== 'string') {
    return { ok: false, problem: `${NOT_A_DISPATCH}.deliveryId is not a string` };
  }
  if (token !== undefined && typeof token !== 'string') {
    return { ok: false, problem: `${NOT_A_DISPATCH}.token is not a string` };
  }
  let message: ZektDelivery['message'] = { kind: 'none' };
  // `payload` is present, possibly null, exactly when the provider sent a message that fitted.
  if ('payload' in zekt) {
    message = { kind: 'inline', payload: zekt.payload };
  } else if (zekt.payloadRef !== undefined) {
    const ref = zekt.payloadRef;
    if (!isObject(ref) || typeof ref.url !== 'string') {
      return { ok: false, problem: `${NOT_A_DISPATCH}.payloadRef has no url` };
    }
    message = {
      kind: 'reference',
      url: ref.url,
      ...(typeof ref.bytes === 'number' ? { bytes: ref.bytes } : {}),
    };
  }
  return {
    ok: true,
    delivery: {
      correlationId: correlationId as string | number,
      ...(deliveryId === undefined ? {} : { deliveryId }),
      ...(token === undefined ? {} : { token }),
      ...(typeof zekt.traceparent === 'string' ? { traceparent: zekt.traceparent } : {}),
      message,
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
