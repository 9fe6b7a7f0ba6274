import type { ErrorCategory } from './error-category.js';
import { isActive, type SubscriptionStatus } from './subscription-state.js';

/**
 * When a claimed delivery may not be sent: what changed since it was created (the subscription
 * ended, the App or the repository left the installation, the archived payload expired) is
 * checked before every attempt, and a refusal fails the attempt without calling GitHub.
 */
export interface TargetState<Archive> {
  subscriptionStatus: SubscriptionStatus | null;
  /** The consumer account; null when its row is gone. */
  account: { login: string; installationId: number | null; uninstalledAt: number | null } | null;
  /** The consumer repository; null when its row is gone. */
  repository: { fullName: string; removedAt: number | null } | null;
  /** The delivery's archived payload; null once it expired. */
  archive: Archive | null;
  /** Named in a refusal when the account's or repository's row is gone. */
  consumerAccountId: number;
  consumerRepositoryId: number;
}

/** Why an attempt is refused; `reason`: the delivery's `failure_reason`, for a reason of Zekt's. */
export interface TargetRefusal {
  category: ErrorCategory;
  message: string;
  reason?: string;
}

/** Where the call goes: the installation that acts and the repository it dispatches to. */
export interface DispatchDestination {
  installationId: number;
  owner: string;
  repo: string;
}

export function checkDispatchTarget<Archive>(
  state: TargetState<Archive>,
): { refused: TargetRefusal } | { target: DispatchDestination; archive: Archive } {
  const { subscriptionStatus, account, repository } = state;
  // Revoked, withdrawn or denied since the delivery was created: nothing more goes to that repository.
  if (subscriptionStatus === null || !isActive(subscriptionStatus)) {
    return {
      refused: {
        category: 'other',
        reason: 'subscription_inactive',
        message: `the subscription is ${subscriptionStatus ?? 'gone'}: Zekt no longer sends its repository anything`,
      },
    };
  }
  if (!account || account.installationId === null || account.uninstalledAt !== null) {
    return {
      refused: {
        category: 'not_found',
        message: `the Zekt GitHub App is no longer installed on ${account?.login ?? `account ${state.consumerAccountId}`}; ask its owner to install it again`,
      },
    };
  }
  if (!repository || repository.removedAt !== null) {
    return {
      refused: {
        category: 'not_found',
        message: `repository ${repository?.fullName ?? state.consumerRepositoryId} is no longer part of the Zekt installation of ${account.login}; add it to the installation again`,
      },
    };
  }
  if (state.archive === null) {
    return { refused: { category: 'other', message: 'the archived payload of this delivery has expired' } };
  }
  const [owner, repo] = repository.fullName.split('/') as [string, string];
  return { target: { installationId: account.installationId, owner, repo }, archive: state.archive };
}
