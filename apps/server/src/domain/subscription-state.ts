import type { AuditAction } from './audit.js';

/**
 * Subscription (connection) states and who may move them. Pure: given the current
 * status, the decision asked for and which sides of the subscription the caller is on, says what
 * the status becomes, or why not.
 *
 *   requested ─approve (provider)─► approved ─revoke (provider)──► revoked
 *       │     ─deny (provider)────► denied       └─withdraw (consumer)─► withdrawn
 *       ├─revoke (provider)───────► revoked
 *       └─withdraw (consumer)─────► withdrawn
 *
 * Denied, revoked and withdrawn are final: a new request is a new subscription. Only an approved
 * subscription is active (deliveries are created, dispatched and replayed for it alone). Rows
 * revoked by a consumer before `withdrawn` existed stay `revoked`; their audit entry says
 * `subscription.withdraw`.
 */
export const SUBSCRIPTION_STATUSES = ['requested', 'approved', 'denied', 'revoked', 'withdrawn'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** What the management API's decision endpoints ask for; `revoke` is the consumer's Remove too. */
export type SubscriptionDecision = 'approve' | 'deny' | 'revoke';

/** Which sides of the subscription the caller is a member of (both when one account is both). */
export interface SubscriptionParties {
  asProvider: boolean;
  asConsumer: boolean;
}

export type SubscriptionTransition =
  | { outcome: 'changed'; to: SubscriptionStatus; action: AuditAction }
  /** The caller is not on a side that may make this decision (the API answers as if not found). */
  | { outcome: 'not_allowed' }
  /** The subscription is not in a state this decision applies to (409 with its current status). */
  | { outcome: 'invalid_transition'; from: SubscriptionStatus; to: SubscriptionStatus };

interface Rule {
  from: readonly SubscriptionStatus[];
  to: SubscriptionStatus;
  action: AuditAction;
}

const PROVIDER_RULES: Record<SubscriptionDecision, Rule> = {
  approve: { from: ['requested'], to: 'approved', action: 'subscription.approve' },
  deny: { from: ['requested'], to: 'denied', action: 'subscription.deny' },
  revoke: { from: ['requested', 'approved'], to: 'revoked', action: 'subscription.revoke' },
};

/** A consumer may only end its own subscription: that is a withdrawal, not a revocation. */
const CONSUMER_RULES: Partial<Record<SubscriptionDecision, Rule>> = {
  revoke: { from: ['requested', 'approved'], to: 'withdrawn', action: 'subscription.withdraw' },
};

export function isActive(status: SubscriptionStatus): boolean {
  return status === 'approved';
}

export function isFinal(status: SubscriptionStatus): boolean {
  return status === 'denied' || status === 'revoked' || status === 'withdrawn';
}

/**
 * The transition `decision` makes from `current` for a caller on `parties`' sides. A caller on both
 * sides acts as the provider (its revoke is a revocation).
 * @example decideSubscription('approved', 'revoke', { asProvider: false, asConsumer: true })
 *   // { outcome: 'changed', to: 'withdrawn', action: 'subscription.withdraw' }
 */
export function decideSubscription(
  current: SubscriptionStatus,
  decision: SubscriptionDecision,
  parties: SubscriptionParties,
): SubscriptionTransition {
  const rule = parties.asProvider
    ? PROVIDER_RULES[decision]
    : parties.asConsumer
      ? CONSUMER_RULES[decision]
      : undefined;
  if (!rule) return { outcome: 'not_allowed' };
  if (!rule.from.includes(current)) return { outcome: 'invalid_transition', from: current, to: rule.to };
  return { outcome: 'changed', to: rule.to, action: rule.action };
}
