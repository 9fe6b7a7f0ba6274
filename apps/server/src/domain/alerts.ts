import { HOUR_MS, MINUTE_MS, SECOND_MS } from './duration.js';
import type { Health } from './health.js';

/**
 * Operational alerts: which changes raise one, how alike alerts are folded together,
 * and when a failed send is tried again.
 */
export const ALERT_KINDS = [
  'connection.warning',
  'connection.critical',
  'connection.recovered',
  'delivery.exhausted',
  'delivery.not_started',
  /** A service got a new version of its message schema: its subscribers are told, with the report. */
  'service.schema_changed',
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/** Default of ZEKT_ALERT_DEDUP_WINDOW_MS: an alert like one raised within the last hour is not raised again. */
export const DEFAULT_ALERT_DEDUP_WINDOW_MS = HOUR_MS;

/** How often a worker compares each connection's health with the last one seen. */
export const HEALTH_CHECK_INTERVAL_MS = 60_000;

/**
 * Delays before each send of an alert; the first is the initial send. After the last, the alert is
 * `failed` (still listed in the console). Shorter than deliveries': an alert is worth less late.
 */
export const ALERT_RETRY_SCHEDULE_MS = [
  0,
  10 * SECOND_MS,
  MINUTE_MS,
  5 * MINUTE_MS,
  30 * MINUTE_MS,
  2 * HOUR_MS,
] as const;

/**
 * The alert a change of health raises: turning Warning or Critical (also one to the other), and
 * recovering to Healthy from either; nothing when it stays the same. A connection not seen
 * before counts as having been Healthy.
 *
 * @example healthAlertKind('Healthy', 'Critical') // 'connection.critical'
 */
export function healthAlertKind(previous: Health | null, current: Health): AlertKind | null {
  const before = previous ?? 'Healthy';
  if (before === current) return null;
  if (current === 'Healthy') return 'connection.recovered';
  return current === 'Critical' ? 'connection.critical' : 'connection.warning';
}

/** What makes two alerts the same for deduplication: the kind and what it is about. */
export function alertDedupKey(kind: AlertKind, subject: string): string {
  return `${kind}:${subject}`;
}

/**
 * When to send an alert again after its `attemptsMade`-th send failed, or null when it has had
 * every send its schedule allows.
 */
export function nextAlertAttemptAt(attemptsMade: number, now: number): number | null {
  const delay = ALERT_RETRY_SCHEDULE_MS[attemptsMade];
  return delay === undefined ? null : now + delay;
}

/**
 * Why a send of an alert failed, as the members of the account read it (`lastError`): a category,
 * never the receiver's own error — the receiver is the operator's, and its address or an error
 * quoting it has no business in front of a tenant. The operator's log has the details.
 */
export const ALERT_SEND_FAILURES = {
  unreachable: 'the alert receiver could not be reached',
  timeout: 'the alert receiver did not answer in time',
  error_status: 'the alert receiver answered with an error status',
  redirect: 'the alert receiver answered with a redirect, which is not followed',
} as const;
export type AlertSendFailure = keyof typeof ALERT_SEND_FAILURES;

/**
 * What an answer of the receiver means for the send: delivered (null) on a 2xx only. A redirect is
 * a failure, not followed: following it would send the signed alert to a host nobody configured.
 *
 * @example alertSendFailure(302) // 'redirect'
 */
export function alertSendFailure(status: number): AlertSendFailure | null {
  if (status >= 200 && status < 300) return null;
  return status >= 300 && status < 400 ? 'redirect' : 'error_status';
}
