import type { RunSummary } from './run-summary.js';

/**
 * GitHub's limits on `POST /repos/{owner}/{repo}/dispatches`: `client_payload` has at most 10
 * top-level properties and the request must stay under 64 KB.
 * https://docs.github.com/rest/repos/repos#create-a-repository-dispatch-event
 * Zekt sends one top-level key (`zekt`), and measures the whole request body against the limit
 * (`zekt.traceparent`, 55 bytes when Zekt traces, included).
 */
export const DISPATCH_BODY_LIMIT_BYTES = 64 * 1024;

export interface PayloadRef {
  url: string;
  bytes: number;
}

export interface ZektEnvelope {
  version: 1;
  correlationId: string;
  deliveryId: string;
  durable: boolean;
  isReplay: boolean;
  retry: number;
  token?: string;
  /** W3C trace context of the attempt that sent this delivery, when Zekt traces (SPEC 14). */
  traceparent?: string;
  /** The version of the service's message schema the payload was checked against (docs/contracts.md). */
  schemaVersion?: number;
  event: RunSummary;
  payload?: unknown;
  payloadRef?: PayloadRef;
}

export interface DispatchBody {
  event_type: string;
  client_payload: { zekt: ZektEnvelope };
}

export interface BuildDispatchInput {
  eventType: string;
  correlationId: string;
  deliveryId: string;
  durable: boolean;
  isReplay: boolean;
  retry: number;
  /** Per-delivery token; durable deliveries only (SPEC 6.1). */
  token?: string | undefined;
  /** The attempt's W3C `traceparent`; the consumer may continue the trace under it. */
  traceparent?: string | undefined;
  /** The schema version the message was checked against; null or absent: none. */
  schemaVersion?: number | null | undefined;
  event: RunSummary;
  /** The provider's message, unchanged; `undefined` when the run sent none. */
  message: { payload: unknown } | undefined;
  /** Where the consumer fetches the message when it does not fit (SPEC 4 `payloadRef`). */
  payloadUrl: string;
}

export interface BuiltDispatch {
  body: DispatchBody;
  bytes: number;
  byReference: boolean;
}

export function byteLength(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

/**
 * The aggregated payload for one delivery. The message goes inline when the whole request fits
 * GitHub's limit, otherwise it is replaced by a `payloadRef` the consumer action fetches.
 *
 * @example buildDispatchBody({ eventType: 'deployed', …, message: { payload: { version: '1.2.3' } } })
 */
export function buildDispatchBody(input: BuildDispatchInput): BuiltDispatch {
  const envelope: ZektEnvelope = {
    version: 1,
    correlationId: input.correlationId,
    deliveryId: input.deliveryId,
    durable: input.durable,
    isReplay: input.isReplay,
    retry: input.retry,
    ...(input.token === undefined ? {} : { token: input.token }),
    ...(input.traceparent === undefined ? {} : { traceparent: input.traceparent }),
    // Only with the message it describes: a run without one has nothing to check.
    ...(input.schemaVersion == null || input.message === undefined
      ? {}
      : { schemaVersion: input.schemaVersion }),
    event: input.event,
  };
  if (input.message === undefined) {
    return measure({ event_type: input.eventType, client_payload: { zekt: envelope } }, false);
  }
  const inline = measure(
    {
      event_type: input.eventType,
      client_payload: { zekt: { ...envelope, payload: input.message.payload } },
    },
    false,
  );
  if (inline.bytes < DISPATCH_BODY_LIMIT_BYTES) return inline;
  const messageBytes = byteLength(JSON.stringify(input.message.payload));
  return measure(
    {
      event_type: input.eventType,
      client_payload: { zekt: { ...envelope, payloadRef: { url: input.payloadUrl, bytes: messageBytes } } },
    },
    true,
  );
}

function measure(body: DispatchBody, byReference: boolean): BuiltDispatch {
  return { body, bytes: byteLength(JSON.stringify(body)), byReference };
}
