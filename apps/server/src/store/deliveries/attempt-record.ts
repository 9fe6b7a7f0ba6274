import { newId } from '../../domain/ids.js';
import type { DeliveryUpdate } from '../schema.js';

/** One call to GitHub for a delivery, as its attempt row records it. */
export interface AttemptRecord {
  number: number;
  startedAt: number;
  durationMs: number;
  outcome: 'accepted' | 'failed';
  statusCode: number | null;
  errorCategory: string | null;
  errorMessage: string | null;
  responseHeaders: Record<string, string> | null;
}

/**
 * The end of an attempt: the delivery's new state, written only while `owner` holds its lease, and
 * the attempt itself (null: no call was made: put back for pacing, or given up unattempted).
 */
export interface RecordAttemptInput {
  deliveryId: string;
  owner: string;
  attempt: AttemptRecord | null;
  update: DeliveryUpdate;
  awaitStartSince?: number | undefined;
}

/** The attempt's row, under an id of its start time. */
export function attemptRow(deliveryId: string, subscriptionId: string, a: AttemptRecord) {
  return {
    attempt_id: newId('att', a.startedAt),
    delivery_id: deliveryId,
    subscription_id: subscriptionId,
    number: a.number,
    started_at: a.startedAt,
    duration_ms: a.durationMs,
    outcome: a.outcome,
    status_code: a.statusCode,
    error_category: a.errorCategory,
    error_message: a.errorMessage,
    response_headers: a.responseHeaders === null ? null : JSON.stringify(a.responseHeaders),
  };
}
