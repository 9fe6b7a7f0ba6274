/**
 * Usage counters (SPEC 8): per account and calendar month (UTC). The account charged is the one
 * whose quota or plan the work belongs to: events and messages to the provider, dispatches and
 * confirm/complete calls to the consumer (GitHub counts the dispatch against the consumer's
 * installation), webhook deliveries to the account whose hook received them.
 */
export const USAGE_COUNTERS = [
  'events_received',
  'events_blocked',
  'messages_received',
  'messages_orphaned',
  'dispatch_api_calls',
  'webhook_deliveries_received',
  'confirm_calls',
  'complete_calls',
] as const;
export type UsageCounter = (typeof USAGE_COUNTERS)[number];

/** @example usageMonth(Date.UTC(2026, 10, 20)) // '2026-11' */
export function usageMonth(atMs: number): string {
  const date = new Date(atMs);
  return `${date.getUTCFullYear()}-${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
}

export function isUsageMonth(value: string): boolean {
  return /^\d{4}-(0[1-9]|1[0-2])$/.test(value);
}

export type UsageCounters = Record<UsageCounter, number>;

export function emptyUsage(): UsageCounters {
  return Object.fromEntries(USAGE_COUNTERS.map((name) => [name, 0])) as UsageCounters;
}
