import type { NewDelivery } from '../schema.js';

/** Who a delivery is for; everything else starts in the same state for every new delivery. */
export interface DeliveryIdentity {
  deliveryId: string;
  eventId: string;
  subscriptionId: string;
  serviceId: string;
  providerAccountId: number;
  providerRepositoryId: number;
  consumerAccountId: number;
  consumerRepositoryId: number;
  correlationId: string;
  runAttempt: number;
  eventType: string;
  durable: boolean;
  retryNumber?: number;
  replayOf?: string | null;
  /** The delivery span's context (tracing/spans.ts); null: not traced. */
  traceParent?: string | null;
  /** The schema version its message was checked against (`client_payload.zekt.schemaVersion`). */
  schemaVersion?: number | null;
}

/** A new delivery: Dispatched, due now, never attempted (DispatchedAt is set at creation). */
export function newDeliveryRow(identity: DeliveryIdentity, now: number): NewDelivery {
  return {
    delivery_id: identity.deliveryId,
    event_id: identity.eventId,
    subscription_id: identity.subscriptionId,
    service_id: identity.serviceId,
    provider_account_id: identity.providerAccountId,
    provider_repository_id: identity.providerRepositoryId,
    consumer_account_id: identity.consumerAccountId,
    consumer_repository_id: identity.consumerRepositoryId,
    correlation_id: identity.correlationId,
    run_attempt: identity.runAttempt,
    event_type: identity.eventType,
    durable: identity.durable,
    status: 'Dispatched',
    dispatch_state: 'pending',
    attempt_count: 0,
    next_attempt_at: now,
    lease_owner: null,
    lease_expires_at: null,
    dispatched_at: now,
    confirmed_at: null,
    completed_at: null,
    consumer_conclusion: null,
    is_finalized: false,
    confirmation_attempts: 0,
    retry_number: identity.retryNumber ?? 0,
    platform_response: null,
    failure_reason: null,
    replay_of: identity.replayOf ?? null,
    replayed_by: null,
    payload_by_reference: false,
    slot_reserved: false,
    awaiting_start_since: null,
    not_started_at: null,
    run_seen_at: null,
    consumer_run_id: null,
    consumer_run_url: null,
    consumer_run_html_url: null,
    run_follow_at: null,
    run_follow_reads: 0,
    updated_at: now,
    trace_parent: identity.traceParent ?? null,
    schema_version: identity.schemaVersion ?? null,
  };
}
