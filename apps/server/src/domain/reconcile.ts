import { DAY_MS, HOUR_MS, MINUTE_MS } from './duration.js';
import { isRateLimited } from './error-category.js';
import { requestedDelayMs } from './retry-schedule.js';

/**
 * The reconciler's rules (issue 12 §3). GitHub keeps a webhook's deliveries for 3 days and never
 * redelivers on its own (https://docs.github.com/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks),
 * so a webhook Zekt missed is found in the hook's delivery list and asked for again.
 */

/** The events Zekt acts on; a missed `ping` or `push` is not worth a redelivery. */
export const RECONCILED_EVENTS: ReadonlySet<string> = new Set([
  'workflow_run',
  'installation',
  'installation_repositories',
]);

/** How far back GitHub lists deliveries. */
export const GITHUB_DELIVERY_KEPT_MS = 3 * DAY_MS;

/** Pages of 100 deliveries read per webhook and pass: a bound on one pass's GitHub calls. */
export const MAX_DELIVERY_PAGES = 10;

/** Redelivery requests are remembered a little longer than GitHub keeps the deliveries. */
export const REDELIVERY_REQUEST_KEPT_MS = 7 * DAY_MS;

/** One delivery attempt as GitHub lists it. */
export interface ListedDelivery {
  id: number;
  guid: string;
  deliveredAt: string;
  /** 0 when the receiver never answered. */
  statusCode: number;
  event: string;
  action: string | null;
}

/**
 * The webhooks whose every listed attempt failed (no 2xx answer), one entry per GUID: the newest
 * attempt, which is the one to redeliver. Only the events Zekt acts on, and only within GitHub's
 * 3 days.
 *
 * @example failedWebhooks([{ id: 1, guid: 'g', statusCode: 0, … }], now) // [{ id: 1, guid: 'g', … }]
 */
export function failedWebhooks(deliveries: ListedDelivery[], now: number): ListedDelivery[] {
  const byGuid = new Map<string, { newest: ListedDelivery; succeeded: boolean }>();
  for (const delivery of deliveries) {
    if (!RECONCILED_EVENTS.has(delivery.event)) continue;
    if (now - Date.parse(delivery.deliveredAt) > GITHUB_DELIVERY_KEPT_MS) continue;
    const ok = delivery.statusCode >= 200 && delivery.statusCode < 300;
    const seen = byGuid.get(delivery.guid);
    if (seen === undefined) {
      byGuid.set(delivery.guid, { newest: delivery, succeeded: ok });
      continue;
    }
    if (ok) seen.succeeded = true;
    if (delivery.id > seen.newest.id) seen.newest = delivery;
  }
  return [...byGuid.values()].filter((entry) => !entry.succeeded).map((entry) => entry.newest);
}

export type ReconcileFailureKind = 'rate_limited' | 'unauthorized' | 'not_found' | 'unavailable';

/** What GitHub's refusal means for a webhook, and how long to leave it alone. */
export interface ReconcileBackoff {
  kind: ReconcileFailureKind;
  /** Leave the webhook alone until then (epoch ms). */
  until: number;
}

const MAX_BACKOFF_MS = 6 * HOUR_MS;

/**
 * How long to back off a webhook after GitHub refused a call about it: a rate limit until GitHub's
 * `Retry-After` or `x-ratelimit-reset` (else a minute); 401/403 (credentials, permission) and 404
 * (hook or repository gone) doubling from 5 minutes; anything else (5xx, network) doubling from a
 * minute, or longer when `Retry-After` says so; never longer than 6 hours. `failures` counts consecutive refusals, this one included.
 *
 * @example reconcileBackoff({ status: 404, headers: {}, message: 'Not Found' }, 1, 0) // { kind: 'not_found', until: 300000 }
 */
export function reconcileBackoff(
  failure: { status: number | undefined; headers: Record<string, string>; message: string },
  failures: number,
  now: number,
): ReconcileBackoff {
  const doubling = (baseMs: number) =>
    Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 10));
  if (failure.status !== undefined && isRateLimited(failure)) {
    const requested = requestedDelayMs(failure.headers, now);
    return { kind: 'rate_limited', until: now + Math.min(MAX_BACKOFF_MS, requested ?? MINUTE_MS) };
  }
  if (failure.status === 401 || failure.status === 403) {
    return { kind: 'unauthorized', until: now + doubling(5 * MINUTE_MS) };
  }
  if (failure.status === 404) return { kind: 'not_found', until: now + doubling(5 * MINUTE_MS) };
  // A 503 may say when to come back; never sooner than the doubling.
  const requested = Math.min(MAX_BACKOFF_MS, requestedDelayMs(failure.headers, now) ?? 0);
  return { kind: 'unavailable', until: now + Math.max(requested, doubling(MINUTE_MS)) };
}
