import { type DeliveryMode, tracksRuns } from './delivery-mode.js';
import { DEFAULT_EVENT_TYPE } from './event-type.js';

/**
 * The policy check of SPEC 3.3, as a pure function: given what the store knows about a completed
 * run, decide whether it is blocked and which deliveries to create.
 */
export interface RoutableSubscription {
  subscriptionId: string;
  serviceId: string;
  serviceEventType: string | null;
  consumerAccountId: number;
  consumerRepositoryId: number;
  /** The subscription's Durable Delivery switch. */
  durable: boolean;
  /** The consumer repo's COMPLETION switch (completion tracking webhook placed). */
  completionTracking: boolean;
  /** How the subscription delivers (domain/delivery-mode.ts); default `repository_dispatch`. */
  deliveryMode?: DeliveryMode;
}

export interface PlannedDelivery {
  subscriptionId: string;
  serviceId: string;
  consumerAccountId: number;
  consumerRepositoryId: number;
  eventType: string;
  durable: boolean;
}

export type RoutingDecision =
  | { outcome: 'blocked'; reason: 'workflow_not_whitelisted' }
  | { outcome: 'routed'; deliveries: PlannedDelivery[] };

export interface RoutingInput {
  whitelisted: boolean;
  /** Approved subscriptions of every service published from this workflow. */
  subscriptions: RoutableSubscription[];
  message: { eventType: string } | undefined;
}

/**
 * @example decideRouting({ whitelisted: false, subscriptions: [], message: undefined })
 *   // { outcome: 'blocked', reason: 'workflow_not_whitelisted' }
 */
export function decideRouting(input: RoutingInput): RoutingDecision {
  if (!input.whitelisted) return { outcome: 'blocked', reason: 'workflow_not_whitelisted' };
  return {
    outcome: 'routed',
    deliveries: input.subscriptions.map((subscription) => ({
      subscriptionId: subscription.subscriptionId,
      serviceId: subscription.serviceId,
      consumerAccountId: subscription.consumerAccountId,
      consumerRepositoryId: subscription.consumerRepositoryId,
      eventType: input.message?.eventType ?? subscription.serviceEventType ?? DEFAULT_EVENT_TYPE,
      // SPEC 3.3: durable needs both switches, the order the seed's console procedure sets them in;
      // a workflow_dispatch subscription needs no COMPLETION, Zekt follows the run it started (4.1).
      durable:
        subscription.durable &&
        tracksRuns({
          mode: subscription.deliveryMode ?? 'repository_dispatch',
          completionTracking: subscription.completionTracking,
        }),
    })),
  };
}
