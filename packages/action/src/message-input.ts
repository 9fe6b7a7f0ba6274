/**
 * The message's own rules, checked in the step before anything is sent, so a typo fails
 * in a second with a message about the input instead of a round trip and a 400 from the service.
 * They are the service's rules: the service checks them again.
 */

/** The serialized payload may be 512 KB; the service answers 413 beyond. */
export const PAYLOAD_LIMIT_BYTES = 512 * 1024;

/**
 * GitHub accepts 1–100 characters for a `repository_dispatch` event type; Zekt narrows the alphabet
 * so an event type is always safe in a workflow file, a URL and a log line.
 */
export const EVENT_TYPE_PATTERN = /^[A-Za-z0-9._:-]{1,100}$/;

export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

export interface MessagePayload {
  /** The parsed JSON value, sent as `payload` in the body. */
  value: unknown;
  /** UTF-8 bytes of its serialization: what the service measures against the limit. */
  bytes: number;
}

/**
 * Reads the `payload` input: a JSON text of at most 512 KB once serialized. An empty input is `{}`
 * (the action's default).
 *
 * @example checkPayload('{"version":"1.2.3"}') // { ok: true, value: { value: { version: '1.2.3' }, bytes: 19 } }
 */
export function checkPayload(text: string): Checked<MessagePayload> {
  const source = text.trim() === '' ? '{}' : text;
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (error) {
    return {
      ok: false,
      problem: `payload is not valid JSON (${(error as Error).message}); pass a JSON text, e.g. payload: '{"version": "1.2.3"}' or payload: \${{ toJSON(steps.build.outputs) }}`,
    };
  }
  if (typeof value === 'string') {
    // The service reads a string payload as a JSON text (the public zekt-action sends its input
    // that way), so a JSON string must hold JSON; what is sent and measured is the value inside.
    try {
      value = JSON.parse(value);
    } catch {
      return {
        ok: false,
        problem: `payload is a JSON string, and Zekt reads a string payload as JSON text, but this one is not JSON; send an object instead, e.g. payload: '{"message": ${JSON.stringify(value).slice(0, 40)}}'`,
      };
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes > PAYLOAD_LIMIT_BYTES) {
    return {
      ok: false,
      problem: `payload is ${bytes} bytes serialized; Zekt accepts at most ${PAYLOAD_LIMIT_BYTES} bytes (512 KB): send a reference (a URL, an artifact name) instead of the data`,
    };
  }
  return { ok: true, value: { value, bytes } };
}

/**
 * Checks the `event-type` input; returns why it is refused, or undefined.
 *
 * @example describeEventTypeProblem('deploy done') // "event-type may only contain … (found \" \")"
 */
export function describeEventTypeProblem(value: string): string | undefined {
  if (value === '') {
    return 'event-type is required to send a message: the repository_dispatch type consumers listen for (on.repository_dispatch.types), e.g. event-type: acme-deployed';
  }
  if (value.length > 100) return `event-type is ${value.length} characters long; GitHub allows at most 100`;
  if (!EVENT_TYPE_PATTERN.test(value)) {
    const bad = [...new Set(value.replace(/[A-Za-z0-9._:-]/g, ''))].join('');
    return `event-type may only contain letters, digits, '.', '_', ':' and '-' (found ${JSON.stringify(bad)})`;
  }
  return undefined;
}
