import { ERROR_CATEGORIES, type ErrorCategory } from './error-category.js';

/**
 * Diagnostics of a connection (SPEC 7): failed attempts of the last 30 days grouped by category,
 * and what to do about each category that occurred. Recommendations name the setting, permission
 * or place to look, because "an error happened" helps nobody.
 */
export const DIAGNOSTICS_WINDOW_MS = 30 * 24 * 3_600_000;
export const RECENT_FAILURES = 10;

export type CategoryCounts = Record<ErrorCategory, number>;

export function emptyCategories(): CategoryCounts {
  return Object.fromEntries(ERROR_CATEGORIES.map((c) => [c, 0])) as CategoryCounts;
}

export interface Recommendation {
  category: ErrorCategory;
  text: string;
}

export interface RecommendationContext {
  consumerAccount: string;
  consumerRepository: string;
  /** Failed attempts per category in the window. */
  counts: CategoryCounts;
  /** The connection's delivery mode; non-durable deliveries are never retried. */
  durable: boolean;
}

const TEXT: Record<ErrorCategory, (c: RecommendationContext) => string> = {
  service_unavailable: (c) =>
    `GitHub answered 5xx for ${c.consumerRepository}. This is on GitHub's side (check githubstatus.com); ${
      c.durable
        ? 'durable deliveries are retried on the schedule, no action needed unless they end in Failed'
        : 'non-durable deliveries are not retried: turn on Durable Delivery for this subscription, or replay the failed deliveries'
    }.`,
  timeout: (c) =>
    `Calls to GitHub for ${c.consumerRepository} timed out. Check the network path from Zekt to GitHub (proxy, firewall, DNS latency)${
      c.durable ? '; durable deliveries are retried' : '; replay the failed deliveries once it is fixed'
    }.`,
  auth: (c) =>
    `GitHub refused the App's credentials for ${c.consumerRepository} (401/403). The Zekt App installation on ${c.consumerAccount} probably lacks the "Contents: read & write" repository permission needed for repository_dispatch, or the installation is suspended: ask an owner of ${c.consumerAccount} to review and accept the App's permissions (or reinstall it), then replay the failed deliveries.`,
  rate_limited: (c) =>
    `GitHub rate-limited dispatches to ${c.consumerRepository}. Installations get about 80 content-creating requests a minute: lower ZEKT_INSTALLATION_DISPATCH_RATE if it was raised, spread the provider's runs, or split consumers across repositories; Zekt honours Retry-After and x-ratelimit-reset on durable deliveries.`,
  network: (c) =>
    `Zekt could not reach GitHub (DNS or connection errors) while dispatching to ${c.consumerRepository}. Check GITHUB_API_URL, DNS resolution and outbound HTTPS from the Zekt host.`,
  not_found: (c) =>
    `GitHub answered 404 for ${c.consumerRepository}: the Zekt App is not installed on that repository, or the repository was renamed, transferred or deleted. Add the repository to the ${c.consumerAccount} installation (or update the subscription's "Delivers to" repository), then replay the failed deliveries.`,
  rejected: (c) =>
    `GitHub rejected the dispatch payload for ${c.consumerRepository} (422): the event type must be 1–100 characters and client_payload under 64 KB with at most 10 top-level keys. Check the provider's event type; Zekt sends large messages by reference, so report this if it persists.`,
  other: (c) =>
    `Unexpected failures dispatching to ${c.consumerRepository}: see the recent failures below for GitHub's messages.`,
};

/** One recommendation per category that occurred, most frequent first. */
export function recommend(context: RecommendationContext): Recommendation[] {
  return ERROR_CATEGORIES.filter((category) => context.counts[category] > 0)
    .sort((a, b) => context.counts[b] - context.counts[a])
    .map((category) => ({ category, text: TEXT[category](context) }));
}
