import type { DeliveryRoute } from './delivery-mode.js';
import { DAY_MS } from './duration.js';
import { ERROR_CATEGORIES } from './error-category.js';
import { NOT_STARTED_CATEGORY, notStartedRecommendation } from './not-started.js';

/**
 * Diagnostics of a connection: failed attempts of the last 30 days grouped by category,
 * deliveries GitHub accepted but no workflow started for (`not_started`), and what to do
 * about each category that occurred. Recommendations name the setting, permission
 * or place to look, because "an error happened" helps nobody.
 */
export const DIAGNOSTICS_WINDOW_MS = 30 * DAY_MS;
export const RECENT_FAILURES = 10;

/** The attempts' error categories, then the deliveries that never started. */
export const DIAGNOSTIC_CATEGORIES = [...ERROR_CATEGORIES, NOT_STARTED_CATEGORY] as const;
export type DiagnosticCategory = (typeof DIAGNOSTIC_CATEGORIES)[number];

export type CategoryCounts = Record<DiagnosticCategory, number>;

export function emptyCategories(): CategoryCounts {
  return Object.fromEntries(DIAGNOSTIC_CATEGORIES.map((c) => [c, 0])) as CategoryCounts;
}

export interface Recommendation {
  category: DiagnosticCategory;
  text: string;
}

export interface RecommendationContext {
  consumerAccount: string;
  consumerRepository: string;
  /** Failed attempts per category in the window. */
  counts: CategoryCounts;
  /** The connection's delivery mode; non-durable deliveries are never retried. */
  durable: boolean;
  /** Event types of the deliveries that never started, and how long Zekt waited for them. */
  notStarted?: { eventTypes: readonly string[]; afterMs: number };
  /** How the subscription delivers now (default `repository_dispatch`). */
  route?: DeliveryRoute;
}

/** The workflow a `workflow_dispatch` connection delivers to, when it does. */
function dispatchedWorkflow(c: RecommendationContext) {
  return c.route?.mode === 'workflow_dispatch' ? c.route : null;
}

/** The `on:` a workflow needs to receive `workflow_dispatch` deliveries. */
const WORKFLOW_DISPATCH_TRIGGER = '`on: workflow_dispatch: inputs: zekt: { required: true, type: string }`';

const TEXT: Record<DiagnosticCategory, (c: RecommendationContext) => string> = {
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
    dispatchedWorkflow(c)
      ? `GitHub refused the App's workflow_dispatch to ${c.consumerRepository} (401/403). workflow_dispatch needs the "Actions: read & write" repository permission (actions: write), which installations made before Zekt asked for it have not accepted: an owner of ${c.consumerAccount} accepts the App's new permissions in the installation's settings on GitHub (Settings › GitHub Apps › Zekt › Review request), or the subscription goes back to repository_dispatch. Then replay the failed deliveries.`
      : `GitHub refused the App's credentials for ${c.consumerRepository} (401/403). The Zekt App installation on ${c.consumerAccount} probably lacks the "Contents: read & write" repository permission needed for repository_dispatch, or the installation is suspended: ask an owner of ${c.consumerAccount} to review and accept the App's permissions (or reinstall it), then replay the failed deliveries.`,
  rate_limited: (c) =>
    `GitHub rate-limited dispatches to ${c.consumerRepository}. Installations get about 80 content-creating requests a minute: lower ZEKT_INSTALLATION_DISPATCH_RATE if it was raised, spread the provider's runs, or split consumers across repositories; Zekt honours Retry-After and x-ratelimit-reset on durable deliveries.`,
  network: (c) =>
    `Zekt could not reach GitHub (DNS or connection errors) while dispatching to ${c.consumerRepository}. Check GITHUB_API_URL, DNS resolution and outbound HTTPS from the Zekt host.`,
  not_found: (c) => {
    const route = dispatchedWorkflow(c);
    return route
      ? `GitHub answered 404 for the workflow ${route.workflow} of ${c.consumerRepository}: no file .github/workflows/${route.workflow} on ${route.ref ?? 'the default branch'} (or the Zekt App is not installed on the repository). Commit the workflow with ${WORKFLOW_DISPATCH_TRIGGER} there, or correct the subscription's workflow, then replay the failed deliveries.`
      : `GitHub answered 404 for ${c.consumerRepository}: the Zekt App is not installed on that repository, or the repository was renamed, transferred or deleted. Add the repository to the ${c.consumerAccount} installation (or update the subscription's "Delivers to" repository), then replay the failed deliveries.`;
  },
  rejected: (c) => {
    const route = dispatchedWorkflow(c);
    return route
      ? `GitHub refused the workflow_dispatch to ${route.workflow} of ${c.consumerRepository} (422): the workflow must have a workflow_dispatch trigger that declares the zekt input, ${WORKFLOW_DISPATCH_TRIGGER}, and declare no other required input without a default; the ref (${route.ref ?? 'the default branch'}) must exist. GitHub's message in the recent failures below says which. Fix the workflow on that ref, then replay the failed deliveries.`
      : `GitHub rejected the dispatch payload for ${c.consumerRepository} (422): the event type must be 1–100 characters and client_payload under 64 KB with at most 10 top-level keys. Check the provider's event type; Zekt sends large messages by reference, so report this if it persists.`;
  },
  other: (c) =>
    `Unexpected failures dispatching to ${c.consumerRepository}: see the recent failures below for GitHub's messages.`,
  not_started: (c) =>
    notStartedRecommendation({
      consumerRepository: c.consumerRepository,
      eventTypes: c.notStarted?.eventTypes ?? [],
      afterMs: c.notStarted?.afterMs ?? 0,
    }),
};

/** One recommendation per category that occurred, most frequent first. */
export function recommend(context: RecommendationContext): Recommendation[] {
  return DIAGNOSTIC_CATEGORIES.filter((category) => context.counts[category] > 0)
    .sort((a, b) => context.counts[b] - context.counts[a])
    .map((category) => ({ category, text: TEXT[category](context) }));
}
