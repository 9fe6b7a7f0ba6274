import { GitHubApiError, invalidRequest } from './github-error.js';
import { notOfType, notSupplied, tooLong, tooManyProperties, tooShort } from './json-schema-messages.js';

export const DISPATCH_DOCUMENTATION_URL =
  'https://docs.github.com/rest/repos/repos#create-a-repository-dispatch-event';

/** `event_type`: 1–100 characters. */
export const EVENT_TYPE_MAX_LENGTH = 100;
/** `client_payload`: at most 10 top-level properties. */
export const CLIENT_PAYLOAD_MAX_PROPERTIES = 10;
/** `client_payload`: the serialised JSON must be smaller than 64 KB. */
export const CLIENT_PAYLOAD_MAX_BYTES = 64 * 1024;

export interface ValidDispatch {
  eventType: string;
  clientPayload: Record<string, unknown> | null;
}

/**
 * Validates a `POST /repos/{owner}/{repo}/dispatches` body by GitHub's documented limits
 * (https://docs.github.com/rest/repos/repos#create-a-repository-dispatch-event) with GitHub's
 * messages: `"event_type" wasn't supplied.`, `Only 100 characters are allowed; 101 were supplied.`
 * (github/docs#16469), `No more than 10 properties are allowed; 13 were supplied.`,
 * `For 'properties/client_payload', "…" is not an object.` and `client_payload is too large.`
 * (mvasigh/dispatch-action#23).
 */
export function validateDispatch(body: unknown): ValidDispatch {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest(notOfType('links/0/schema', body, 'object'), DISPATCH_DOCUMENTATION_URL);
  }
  const record = body as Record<string, unknown>;
  if (!('event_type' in record)) throw invalidRequest(notSupplied('event_type'), DISPATCH_DOCUMENTATION_URL);
  const eventType = record.event_type;
  if (typeof eventType !== 'string') {
    throw invalidRequest(notOfType('properties/event_type', eventType, 'string'), DISPATCH_DOCUMENTATION_URL);
  }
  // JSON Schema counts characters (code points), not UTF-16 units.
  const length = [...eventType].length;
  if (length < 1) throw invalidRequest(tooShort(1, length), DISPATCH_DOCUMENTATION_URL);
  if (length > EVENT_TYPE_MAX_LENGTH) {
    throw invalidRequest(tooLong(EVENT_TYPE_MAX_LENGTH, length), DISPATCH_DOCUMENTATION_URL);
  }
  if (!('client_payload' in record)) return { eventType, clientPayload: null };
  const clientPayload = record.client_payload;
  if (typeof clientPayload !== 'object' || clientPayload === null || Array.isArray(clientPayload)) {
    throw invalidRequest(
      notOfType('properties/client_payload', clientPayload, 'object'),
      DISPATCH_DOCUMENTATION_URL,
    );
  }
  const count = Object.keys(clientPayload).length;
  if (count > CLIENT_PAYLOAD_MAX_PROPERTIES) {
    throw invalidRequest(tooManyProperties(CLIENT_PAYLOAD_MAX_PROPERTIES, count), DISPATCH_DOCUMENTATION_URL);
  }
  if (Buffer.byteLength(JSON.stringify(clientPayload)) >= CLIENT_PAYLOAD_MAX_BYTES) {
    throw new GitHubApiError(422, 'client_payload is too large.', DISPATCH_DOCUMENTATION_URL);
  }
  return { eventType, clientPayload: clientPayload as Record<string, unknown> };
}
