import { DAY_MS, HOUR_MS } from './duration.js';

/**
 * Retention: delivery records 396 days (13 months), archived payloads 90 days, messages of
 * runs whose completion event never arrived 24 hours. A row expires once it is strictly older than
 * its retention: a record dispatched exactly 396 days ago is still kept.
 */

export const RETENTION_MS = {
  deliveries: 396 * DAY_MS,
  /** The audit trail is kept as long as the delivery records it explains. */
  auditEntries: 396 * DAY_MS,
  archives: 90 * DAY_MS,
  orphanedMessages: DAY_MS,
  /** Delivery GUIDs are remembered long enough to absorb GitHub's redeliveries. */
  webhookDeliveries: 30 * DAY_MS,
  /** A replay's Idempotency-Key returns the same replay for a day. */
  replayRequests: DAY_MS,
  /** Rate-limit windows are a minute; an hour of them is kept for whoever looks into an attack. */
  rateLimitWindows: HOUR_MS,
} as const;

/** Rows created strictly before this time have expired. */
export function expiryCutoff(now: number, retentionMs: number): number {
  return now - retentionMs;
}
