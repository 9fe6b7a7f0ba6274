import type { ErrorCategory } from './error-category.js';

/**
 * Delivery states and their transitions (SPEC 5; the seed's section 3). Pure: given the current
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
