import { DAY_MS, HOUR_MS, MINUTE_MS } from './duration.js';
import { isRateLimited } from './error-category.js';
import { requestedDelayMs } from './retry-schedule.js';

/**
 * The reconciler's rules. GitHub keeps a webhook's deliveries for 3 days and never
 * redelivers on its own (https://docs.github.com/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks),
 * so a webhook Zekt missed is found in the hook's delivery list and asked for again.
 */

/**
 * Which webhook the reconciler reads: the App's, or a repository hook Zekt placed (by its id). The
 * key (`app`, `repository:<hook id>`) names it in reports and in `webhook_redeliveries`.
 */
export type ReconciledWebhook = { kind: 'app' } | { kind: 'repository'; hookId: number };

export function webhookKey(webhook: ReconciledWebhook): string {
  return webhook.kind === 'app' ? 'app' : `repository:${webhook.hookId}`;
}

/** The webhook a key names; null for anything `webhookKey` does not write. */
export function parseWebhookKey(key: string): ReconciledWebhook | null {
  if (key === 'app') return { kind: 'app' };
  const id = /^repository:(\d{1,15})$/.exec(key)?.[1];
  return id === undefined ? null : { kind: 'repository', hookId: Number(id) };
}

/**
 * The events Zekt acts on, per webhook; a missed `ping` or `push` is not worth a redelivery. The
 * App's webhook carries the installation events (only it does); `workflow_run` is acted on only
 * through the hooks Zekt placed (the App's copy, when the App subscribes to it, is acknowledged and
 * ignored, so asking for it again would change nothing).
 */
export const RECONCILED_EVENTS: Readonly<Record<ReconciledWebhook['kind'], ReadonlySet<string>>> = {
  app: new Set(['installation', 'installation_repositories']),
  repository: new Set(['workflow_run']),
};

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
 * attempt, which is the one to redeliver. Only the events Zekt acts on through this webhook, and
 * only within GitHub's 3 days.
 *
 * @example failedWebhooks([{ id: 1, guid: 'g', statusCode: 0, … }], now, 'repository') // [{ id: 1, guid: 'g', … }]
 */
export function failedWebhooks(
  deliveries: ListedDelivery[],
  now: number,
  webhook: ReconciledWebhook['kind'],
): ListedDelivery[] {
  const reconciled = RECONCILED_EVENTS[webhook];
  const byGuid = new Map<string, { newest: ListedDelivery; succeeded: boolean }>();
  for (const delivery of deliveries) {
    if (!reconciled.has(delivery.event)) continue;
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

/**
 * Whether Zekt received a GUID through `webhook`, from the receipts of that GUID (any hook). A GUID
 * is the event's, shared by every hook that received it, so it counts only with the hook it came
 * through: a repository hook's own id, or a receipt written before receipts named their hook
 * (`hookId` null, the hook unknown). The App's webhook has no id Zekt knows, but the events read
 * there (installation events) reach no other hook, so any receipt of the GUID is the App's.
 *
 * @example isReceivedThrough({ kind: 'repository', hookId: 7 }, [{ hookId: 8 }]) // false
 */
export function isReceivedThrough(
  webhook: ReconciledWebhook,
  receipts: ReadonlyArray<{ hookId: number | null }>,
): boolean {
  if (webhook.kind === 'app') return receipts.length > 0;
  return receipts.some((receipt) => receipt.hookId === null || receipt.hookId === webhook.hookId);
}

/**
 * How often the reconciler asks GitHub to redeliver one webhook: a redelivery can fail again (Zekt
 * down again, a lock-out, a 503 while the store was away), and asking once lost such a run for
 * good; asking forever would hammer GitHub for a webhook that can never succeed (a hook whose
 * secret no longer matches). The first ask and 4 more.
 */
export const MAX_REDELIVERY_ASKS = 5;

/** Wait after an ask whose redelivery failed again before asking once more; doubles per ask. */
export const REASK_AFTER_MS = 15 * MINUTE_MS;

/** What the reconciler asked for a webhook before (a `webhook_redeliveries` row). */
export interface PreviousAsk {
  asks: number;
  /** When the last ask was made (epoch ms). */
  askedAt: number;
  /** GitHub's id of the attempt the last ask redelivered. */
  githubDeliveryId: number;
}

export type RedeliveryDecision =
  /** Ask GitHub to redeliver `newest` (the first time, or again). */
  | { decision: 'ask' }
  /** Not now: GitHub has not made the redelivery asked for yet, or the back-off runs until `until`. */
  | { decision: 'wait'; until: number | null }
  /** Its redelivery failed after the last ask allowed: Zekt stops asking and says so. */
  | { decision: 'give_up' };

/**
 * Whether to ask GitHub (again) for a webhook that failed on every listed attempt and that Zekt
 * never received through that webhook. Never asked: ask. Asked before: only once the redelivery
 * asked for was attempted and failed too (an attempt newer than the one asked about), at most
 * `MAX_REDELIVERY_ASKS` asks in all, each after a wait that doubles from `REASK_AFTER_MS` (15 min,
 * 30 min, 1 h, 2 h: the last ask about 3¾ hours after the first, well inside GitHub's 3 days),
 * capped at 6 hours.
 *
 * @example decideRedelivery({ id: 9, … }, { asks: 1, askedAt: 0, githubDeliveryId: 5 }, 15 * 60_000) // { decision: 'ask' }
 */
export function decideRedelivery(
  newest: ListedDelivery,
  previous: PreviousAsk | undefined,
  now: number,
): RedeliveryDecision {
  if (previous === undefined) return { decision: 'ask' };
  if (newest.id <= previous.githubDeliveryId) return { decision: 'wait', until: null };
  if (previous.asks >= MAX_REDELIVERY_ASKS) return { decision: 'give_up' };
  const until =
    previous.askedAt + Math.min(MAX_BACKOFF_MS, REASK_AFTER_MS * 2 ** Math.min(previous.asks - 1, 10));
  return now < until ? { decision: 'wait', until } : { decision: 'ask' };
}
