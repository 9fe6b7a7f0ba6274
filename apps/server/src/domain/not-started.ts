/**
 * Never-started deliveries. GitHub answers 204 to a `repository_dispatch`
 * even when no workflow of the repository listens for that event type, or when the workflow that
 * does is not on the default branch: an accepted dispatch proves nothing ran. A durable delivery
 * GitHub accepted therefore *waits for its start*: the consumer's confirm, its complete, or any
 * `workflow_run` of it seen by completion tracking ends the wait. A delivery still waiting
 * `afterMs` after GitHub accepted it is flagged **not started** (`notStartedAt`).
 *
 * The flag is not a state of the seed's table: the delivery stays Dispatched, so a late confirm
 * simply moves it on (the flag stays as a record of what happened). It counts against the
 * connection's health like any delivery that did not succeed, has its own diagnostics category,
 * and the delivery can be replayed like any other.
 */
export const DEFAULT_NOT_STARTED_AFTER_MS = 10 * 60_000;

/** The diagnostics category of flagged deliveries (next to the attempts' error categories). */
export const NOT_STARTED_CATEGORY = 'not_started';

/**
 * Whether a delivery GitHub just accepted starts waiting for its consumer workflow. Non-durable
 * deliveries are fire-and-forget: nobody reports their start, so they never wait. A delivery whose
 * run GitHub named in its answer (a `workflow_dispatch`) started: GitHub created the run,
 * so there is nothing to guess.
 * @example awaitsStart({ durable: true }) // true
 * @example awaitsStart({ durable: true, runKnown: true }) // false
 */
export function awaitsStart(delivery: { durable: boolean; runKnown?: boolean }): boolean {
  return delivery.durable && !delivery.runKnown;
}

/**
 * Deliveries waiting for their start since this time or earlier are flagged now.
 * @example notStartedCutoff(Date.UTC(2026, 0, 1, 0, 10), 600_000) // Date.UTC(2026, 0, 1, 0, 0)
 */
export function notStartedCutoff(now: number, afterMs: number): number {
  return now - afterMs;
}

/**
 * When a delivery waiting since `waitingSince` is flagged (the pass schedules itself by it).
 * Exactly `afterMs` after acceptance counts as late: the cutoff is inclusive.
 */
export function notStartedDueAt(waitingSince: number, afterMs: number): number {
  return waitingSince + afterMs;
}

/** @example isNotStarted({ awaitingStartSince: 0 }, 600_000, 600_000) // true */
export function isNotStarted(
  delivery: { awaitingStartSince: number | null },
  now: number,
  afterMs: number,
): boolean {
  return (
    delivery.awaitingStartSince !== null && delivery.awaitingStartSince <= notStartedCutoff(now, afterMs)
  );
}

/**
 * What to do about deliveries that never started: the workflow GitHub would start for them must
 * exist, on the default branch, listening for the event type they carry.
 */
export function notStartedRecommendation(input: {
  consumerRepository: string;
  eventTypes: readonly string[];
  afterMs: number;
}): string {
  const types = input.eventTypes.length > 0 ? input.eventTypes.join(', ') : '<event type>';
  return `GitHub accepted deliveries to ${input.consumerRepository} (204) but no workflow run started within ${describeWait(input.afterMs)}: GitHub accepts a repository_dispatch even when no workflow listens for it. The consumer workflow must exist on the default branch of ${input.consumerRepository} with \`on: repository_dispatch: types: [${types}]\` (a workflow on another branch is never triggered), and should set run-name: "zekt \${{ github.event.client_payload.zekt.deliveryId }}" so completion tracking sees it start. Then replay the not-started deliveries.`;
}

/** @example describeWait(600_000) // '10 min' */
export function describeWait(afterMs: number): string {
  if (afterMs >= 60_000 && afterMs % 60_000 === 0) return `${afterMs / 60_000} min`;
  return `${Math.round(afterMs / 1000)} s`;
}
