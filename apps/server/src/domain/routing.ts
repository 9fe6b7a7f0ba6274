import { type DeliveryMode, tracksRuns } from './delivery-mode.js';
import { DEFAULT_EVENT_TYPE } from './event-type.js';
import type { Enforcement, SchemaInForce } from './message-schema.js';

/**
 * The policy check, as a pure function: given what the store knows about a completed
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
  /** The service's message schema, when it has one (domain/message-schema.ts). */
  schema: ServiceSchemaState | null;
}

export interface ServiceSchemaState {
  slug: string;
  version: number;
  enforcement: Enforcement;
  /** The version does not accept a missing message (it refuses `null`). */
  requiresMessage: boolean;
}

export interface PlannedDelivery {
  subscriptionId: string;
  serviceId: string;
  consumerAccountId: number;
  consumerRepositoryId: number;
  eventType: string;
  durable: boolean;
  /** The schema version the run's message was checked against for this service; null: none. */
  schemaVersion: number | null;
}

export type RoutingDecision =
  | { outcome: 'blocked'; reason: 'workflow_not_whitelisted' }
  /** An enforced schema of a service the run goes to requires a message, and the run sent none. */
  | { outcome: 'blocked'; reason: 'message_missing'; missingMessage: SchemaInForce[] }
  | {
      outcome: 'routed';
      deliveries: PlannedDelivery[];
      /** Warn-mode schemas that require a message the run did not send: recorded, still routed. */
      missingMessage: SchemaInForce[];
    };

export interface RoutingInput {
  whitelisted: boolean;
  /** Approved subscriptions of every service published from this workflow. */
  subscriptions: RoutableSubscription[];
  /** The run's message; `schemaVersions`: per service, the version it was checked against. */
  message: { eventType: string; schemaVersions?: Record<string, number> | null } | undefined;
}

/**
 * @example decideRouting({ whitelisted: false, subscriptions: [], message: undefined })
 *   // { outcome: 'blocked', reason: 'workflow_not_whitelisted' }
 */
export function decideRouting(input: RoutingInput): RoutingDecision {
  if (!input.whitelisted) return { outcome: 'blocked', reason: 'workflow_not_whitelisted' };
  const missingMessage = input.message === undefined ? schemasMissingMessage(input.subscriptions) : [];
  const enforced = missingMessage.filter((s) => s.enforcement === 'enforce');
  // Like a run of a workflow that is not whitelisted: recorded, charged, delivered to no one.
  if (enforced.length > 0) return { outcome: 'blocked', reason: 'message_missing', missingMessage: enforced };
  return {
    outcome: 'routed',
    missingMessage,
    deliveries: input.subscriptions.map((subscription) => ({
      subscriptionId: subscription.subscriptionId,
      serviceId: subscription.serviceId,
      consumerAccountId: subscription.consumerAccountId,
      consumerRepositoryId: subscription.consumerRepositoryId,
      eventType: input.message?.eventType ?? subscription.serviceEventType ?? DEFAULT_EVENT_TYPE,
      // Durable needs both switches, the order the seed's console procedure sets them in;
      // a workflow_dispatch subscription needs no COMPLETION, Zekt follows the run it started (4.1).
      durable:
        subscription.durable &&
        tracksRuns({
          mode: subscription.deliveryMode ?? 'repository_dispatch',
          completionTracking: subscription.completionTracking,
        }),
      schemaVersion: input.message?.schemaVersions?.[subscription.serviceId] ?? null,
    })),
  };
}

/**
 * The services a run without a message goes to whose schema is in force and requires one, once
 * each, in slug order. Only services with an approved subscription are looked at: a run is
 * blocked for the consumers it would reach, and those are the services routing reads.
 */
function schemasMissingMessage(subscriptions: RoutableSubscription[]): SchemaInForce[] {
  const found = new Map<string, SchemaInForce>();
  for (const { serviceId, schema } of subscriptions) {
    if (schema === null || schema.enforcement === 'off' || !schema.requiresMessage) continue;
    found.set(serviceId, {
      serviceId,
      slug: schema.slug,
      version: schema.version,
      enforcement: schema.enforcement,
    });
  }
  return [...found.values()].sort((a, b) => a.slug.localeCompare(b.slug));
}
