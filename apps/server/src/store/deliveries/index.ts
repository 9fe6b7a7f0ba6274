/**
 * Deliveries are the dispatch queue. A worker claims due rows by writing its lease; it records the
 * outcome only while it still holds the lease, so a worker whose lease expired (it stalled or died)
 * can never overwrite the work of the one that took over.
 *
 * One operation per file; this index re-exports what the rest of the server uses.
 */
export type { AttemptRecord, RecordAttemptInput } from './attempt-record.js';
export { changeDeliveryState } from './change-delivery-state.js';
export type { ClaimOptions, ClaimOutcome } from './claim-options.js';
export { claimWithContext } from './claim-with-context.js';
export { deliveriesOfCorrelation } from './deliveries-of-correlation.js';
export { findConsumerDelivery } from './find-consumer-delivery.js';
export { finishAttempt } from './finish-attempt.js';
export { getDelivery } from './get-delivery.js';
export { insertDeliveries } from './insert-deliveries.js';
export { listAttempts } from './list-attempts.js';
export { listDeliveriesOfEvent } from './list-deliveries-of-event.js';
export { type DeliveryIdentity, newDeliveryRow } from './new-delivery-row.js';
export { nextDeliveryDueAt } from './next-delivery-due-at.js';
export { releaseClaims } from './release-claims.js';
