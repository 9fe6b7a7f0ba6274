/** What a redacted value is written as. */
const CENSOR = '[redacted]';

/** Keys whose value never reaches a log line, in any object logged under a line's top-level key. */
const SECRET_KEYS = ['secret', 'token', 'privateKey'];

/** Request headers that carry a credential, in a request logged whole under `req`. */
const SECRET_HEADERS = ['authorization', 'x-hub-signature-256', 'x-hub-signature'];

/**
 * A log line's object with credentials censored, for pino's `formatters.log` and a child logger's
 * bindings (zekt.ts, `createLogger`): `secret`, `token` and `privateKey` of any object logged
 * under a top-level key (`{ app: { secret } }`, an error with a `token`), and the credential
 * headers of a request logged whole as a plain object under `req`. A Fastify request is never
 * written with its headers (http/request-log.ts): its serializer keeps method, path, host and
 * address.
 *
 * It replaces pino's `redact` paths (`*.secret`, …): a wildcard path made pino copy and walk every
 * value of every line, whether or not it held a secret; under `zekt bench` that was 7 % of what the
 * server allocated and 2 % of its CPU (docs/performance.md). Here a line without a secret is
 * checked in place and returned as it was; only a value that holds one is copied, the original
 * left untouched.
 */
export function redactLogObject(object: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const key in object) {
    const value = object[key];
    if (typeof value !== 'object' || value === null) continue;
    let redacted = censored(value, SECRET_KEYS);
    if (key === 'req') redacted = withCensoredHeaders(redacted);
    if (redacted !== value) {
      copy ??= { ...object };
      copy[key] = redacted;
    }
  }
  return copy ?? object;
}

/** `value` itself when it has none of `keys`, else a copy of it with those censored. */
function censored<T extends object>(value: T, keys: readonly string[]): T {
  let copy: T | undefined;
  for (const key of keys) {
    if (!Object.hasOwn(value, key)) continue;
    copy ??= copyOf(value);
    Object.defineProperty(copy, key, { value: CENSOR, enumerable: true, writable: true, configurable: true });
  }
  return copy ?? value;
}

/**
 * Same prototype and every own property, enumerable or not, so an error keeps its message and stack
 * for pino's serializer. An accessor is copied as the value it gives on the original: V8's `stack`
 * accessor (Node 24) reads the error it belongs to, and on a copy it gives an empty string.
 */
function copyOf<T extends object>(value: T): T {
  const copy = Object.create(Object.getPrototypeOf(value)) as T;
  for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(value))) {
    Object.defineProperty(
      copy,
      key,
      'value' in descriptor
        ? descriptor
        : {
            value: (value as Record<string, unknown>)[key],
            enumerable: descriptor.enumerable ?? false,
            writable: true,
            configurable: true,
          },
    );
  }
  return copy;
}

function withCensoredHeaders(request: object): object {
  if (Object.getPrototypeOf(request) !== Object.prototype) return request;
  const headers = (request as { headers?: unknown }).headers;
  if (typeof headers !== 'object' || headers === null) return request;
  const redacted = censored(headers, SECRET_HEADERS);
  return redacted === headers ? request : { ...request, headers: redacted };
}
