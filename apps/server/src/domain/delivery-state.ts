import type { ErrorCategory } from './error-category.js';
import { isPermanentFailure, nextAttemptAt } from './retry-schedule.js';

/**
 * Delivery states and their transitions (the seed's section 3). Pure: given the current
 * record and a trigger, says what changes. The store applies the change only if the record is still
 * in the state it was read in, so a confirm/complete call and the completion-tracking webhook for
 * the same run make one transition, not two.
 */
export const DELIVERY_STATUSES = ['Dispatched', 'Confirmed', 'Completed', 'Failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryState {
  status: DeliveryStatus;
  confirmedAt: number | null;
  confirmationAttempts: number;
}

export interface StateChange {
  status: DeliveryStatus;
  confirmedAt: number | null;
  completedAt?: number;
  conclusion?: 'success' | 'failure';
  isFinalized?: boolean;
  confirmationAttempts: number;
}

export type Transition =
  | { outcome: 'changed'; change: StateChange }
  /** Completed or Failed already: nothing changes (409 with the current record). */
  | { outcome: 'final' };

export function isFinal(status: DeliveryStatus): boolean {
  return status === 'Completed' || status === 'Failed';
}

/**
 * Confirm: Dispatched → Confirmed; Confirmed stays Confirmed. Every confirmation is counted.
 * @example confirm({ status: 'Dispatched', confirmedAt: null, confirmationAttempts: 0 }, 5)
 *   // { outcome: 'changed', change: { status: 'Confirmed', confirmedAt: 5, confirmationAttempts: 1 } }
 */
export function confirm(state: DeliveryState, now: number): Transition {
  if (isFinal(state.status)) return { outcome: 'final' };
  return {
    outcome: 'changed',
    change: {
      status: 'Confirmed',
      confirmedAt: state.confirmedAt ?? now,
      confirmationAttempts: state.confirmationAttempts + 1,
    },
  };
}

/**
 * Complete: Dispatched or Confirmed → Completed (success) or Failed. Completing without a confirm is
 * accepted and sets ConfirmedAt too.
 */
export function complete(state: DeliveryState, success: boolean, now: number): Transition {
  if (isFinal(state.status)) return { outcome: 'final' };
  return {
    outcome: 'changed',
    change: {
      status: success ? 'Completed' : 'Failed',
      confirmedAt: state.confirmedAt ?? now,
      completedAt: now,
      conclusion: success ? 'success' : 'failure',
      isFinalized: true,
      confirmationAttempts: state.confirmationAttempts,
    },
  };
}

/**
 * Why a delivery ends Failed on the dispatch side (its `failureReason`): a non-durable delivery
 * names the category of its only attempt; a durable one was rejected for good (`dispatch_rejected`),
 * sent to a repository that is gone (`consumer_not_found`), or ran out of retries
 * (`dispatch_exhausted`). Failures of Zekt's own (`attempt_outcome_unknown`, `subscription_inactive`)
 * are named where they happen.
 * @example dispatchFailureReason({ durable: true, permanent: false, category: 'service_unavailable' }) // 'dispatch_exhausted'
 */
export function dispatchFailureReason(attempt: {
  durable: boolean;
  /** The last attempt's failure will not change by retrying (or GitHub was never called). */
  permanent: boolean;
  category: ErrorCategory;
}): string {
  if (!attempt.durable) return `dispatch_failed: ${attempt.category}`;
  if (attempt.permanent) return attempt.category === 'rejected' ? 'dispatch_rejected' : 'consumer_not_found';
  return 'dispatch_exhausted';
}

/** What one dispatch attempt came to, as the dispatcher saw it. */
export type DispatchAttemptOutcome =
  | { outcome: 'accepted' }
  | {
      outcome: 'failed';
      category: ErrorCategory;
      /** GitHub's status code; absent when no response came (or GitHub was never called). */
      status?: number | undefined;
      /** Response headers, lower-case: `Retry-After` and the rate-limit headers set the next try. */
      headers: Record<string, string>;
      /** False when Zekt failed it before calling GitHub (nothing to retry). */
      calledGitHub: boolean;
      /** Zekt's own reason (e.g. `subscription_inactive`), which wins over the dispatch one. */
      reason?: string | undefined;
    };

/** The delivery a dispatch attempt is about, as far as the dispatch-side transitions care. */
export interface DispatchedDelivery {
  durable: boolean;
  /** Attempts made, including the one that just ended. */
  attemptsMade: number;
  /** Failed attempts before this one (the record's retry number). */
  retryNumber: number;
}

/**
 * The dispatch-side transition: GitHub accepted (the delivery stays Dispatched, awaiting its run),
 * a retry is due at `dueAt`, or the delivery is Failed for `failureReason`. `exhausted` is a durable
 * delivery that used its whole retry schedule (an alert).
 */
export type DispatchStep =
  | { next: 'accepted' }
  | { next: 'retry'; dueAt: number; retryNumber: number }
  | { next: 'failed'; failureReason: string; retryNumber: number; exhausted: boolean };

export interface RetryTiming {
  now: number;
  schedule?: readonly number[] | undefined;
  random?: (() => number) | undefined;
}

/**
 * What follows a dispatch attempt. A durable delivery is retried on the schedule (GitHub's
 * `Retry-After` or rate-limit reset win when longer) unless the failure is permanent (404, 422, or
 * GitHub never called); a non-durable one gets its one attempt. The retry number counts failed
 * attempts: the one GitHub accepts keeps it.
 * @example afterDispatchAttempt({ durable: true, attemptsMade: 1, retryNumber: 0 },
 *   { outcome: 'failed', category: 'service_unavailable', status: 503, headers: {}, calledGitHub: true },
 *   { now: 0, random: () => 0.5 }) // { next: 'retry', dueAt: 10_000, retryNumber: 1 }
 */
export function afterDispatchAttempt(
  delivery: DispatchedDelivery,
  attempt: Extract<DispatchAttemptOutcome, { outcome: 'failed' }>,
  timing: RetryTiming,
): Exclude<DispatchStep, { next: 'accepted' }>;
export function afterDispatchAttempt(
  delivery: DispatchedDelivery,
  attempt: DispatchAttemptOutcome,
  timing: RetryTiming,
): DispatchStep;
export function afterDispatchAttempt(
  delivery: DispatchedDelivery,
  attempt: DispatchAttemptOutcome,
  timing: RetryTiming,
): DispatchStep {
  if (attempt.outcome === 'accepted') return { next: 'accepted' };
  const retryNumber = delivery.retryNumber + 1;
  const permanent = !attempt.calledGitHub || isPermanentFailure(attempt.status);
  const dueAt =
    delivery.durable && !permanent
      ? nextAttemptAt({
          attemptsMade: delivery.attemptsMade,
          now: timing.now,
          headers: attempt.headers,
          ...(timing.schedule ? { schedule: timing.schedule } : {}),
          ...(timing.random ? { random: timing.random } : {}),
        })
      : null;
  if (dueAt !== null) return { next: 'retry', dueAt, retryNumber };
  const failureReason =
    attempt.reason ??
    dispatchFailureReason({ durable: delivery.durable, permanent, category: attempt.category });
  return { next: 'failed', failureReason, retryNumber, exhausted: failureReason === 'dispatch_exhausted' };
}

/**
 * A non-durable delivery gets exactly one attempt: claimed again after its lease expired, that
 * attempt may or may not have reached GitHub, so it fails rather than risk a second dispatch.
 */
export function outcomeUnknown(delivery: { durable: boolean; attemptsMade: number }): boolean {
  return !delivery.durable && delivery.attemptsMade > 1;
}

export const ATTEMPT_OUTCOME_UNKNOWN = 'attempt_outcome_unknown';
