/**
 * Event types name the `repository_dispatch` a consumer workflow listens for (`on.repository_dispatch.types`).
 * GitHub accepts 1–100 characters; Zekt narrows the alphabet to `[A-Za-z0-9._:-]` so an event type is
 * always safe in a workflow file, a URL and a log line.
 */
export const EVENT_TYPE_PATTERN = /^[A-Za-z0-9._:-]{1,100}$/;
export const DEFAULT_EVENT_TYPE = 'zekt-workflow-completed';

export function isValidEventType(value: unknown): value is string {
  return typeof value === 'string' && EVENT_TYPE_PATTERN.test(value);
}

/** Why an event type is refused, phrased for the person who typed it. */
export function describeInvalidEventType(value: unknown): string {
  if (typeof value !== 'string') return 'eventType must be a string';
  if (value.length === 0) return 'eventType must not be empty';
  if (value.length > 100) return `eventType is ${value.length} characters long; GitHub allows at most 100`;
  const bad = [...new Set(value.replace(/[A-Za-z0-9._:-]/g, ''))].join('');
  return `eventType may only contain letters, digits, '.', '_', ':' and '-' (found ${JSON.stringify(bad)})`;
}
