/**
 * Usage counters: per account and calendar month (UTC). The account charged is the one
 * whose quota or plan the work belongs to: events and messages to the provider, dispatches and
 * confirm/complete calls to the consumer (GitHub counts the dispatch against the consumer's
 * installation), webhook deliveries to the account whose hook received them.
 */
export const USAGE_COUNTERS = [
  'eventsReceived',
  'eventsBlocked',
  'messagesReceived',
  'messagesOrphaned',
  /** Messages accepted although a warn-mode schema of their service refused them. */
  'messageSchemaViolations',
  'dispatchApiCalls',
  'webhookDeliveriesReceived',
  'confirmCalls',
  'completeCalls',
] as const;
export type UsageCounter = (typeof USAGE_COUNTERS)[number];

/**
 * What a provider's completion webhook counts once its receipt is written: one webhook delivery,
 * and one event when the run key is new (a second GUID of a run received already counts only the
 * webhook). Nothing is counted for a GUID processed already or a repository that is not a provider.
 */
export const RECEIPT_COUNTERS: readonly UsageCounter[] = ['webhookDeliveriesReceived'];
export const NEW_EVENT_COUNTERS: readonly UsageCounter[] = ['webhookDeliveriesReceived', 'eventsReceived'];

/** @example usageMonth(Date.UTC(2026, 10, 20)) // '2026-11' */
export function usageMonth(atMs: number): string {
  const date = new Date(atMs);
  return `${date.getUTCFullYear()}-${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
}

const DAY_MS = 86_400_000;

/** The day `usageDay` named last, and the instants it spans: every webhook asks for today. */
let lastDay = { from: 0, to: 0, day: '' };

/** @example usageDay(Date.UTC(2026, 10, 20, 13)) // '2026-11-20' */
export function usageDay(atMs: number): string {
  if (atMs >= lastDay.from && atMs < lastDay.to) return lastDay.day;
  const day = new Date(atMs).toISOString().slice(0, 10);
  const from = Math.floor(atMs / DAY_MS) * DAY_MS;
  lastDay = { from, to: from + DAY_MS, day };
  return day;
}

/** The days of `month` up to and including `today`'s day (all of them for a past month), oldest first. */
export function daysOfMonth(month: string, nowMs: number): string[] {
  const [year, monthNumber] = month.split('-').map(Number) as [number, number];
  const days: string[] = [];
  for (let day = 1; ; day++) {
    const at = Date.UTC(year, monthNumber - 1, day);
    if (new Date(at).getUTCMonth() !== monthNumber - 1 || at > nowMs) break;
    days.push(usageDay(at));
  }
  return days;
}

export function isUsageMonth(value: string): boolean {
  return /^\d{4}-(0[1-9]|1[0-2])$/.test(value);
}

export type UsageCounters = Record<UsageCounter, number>;

export function emptyUsage(): UsageCounters {
  return Object.fromEntries(USAGE_COUNTERS.map((name) => [name, 0])) as UsageCounters;
}
