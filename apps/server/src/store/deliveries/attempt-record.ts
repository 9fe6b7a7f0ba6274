import { newId } from '../../domain/ids.js';
import type { DeliveryUpdate } from '../schema.js';

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

export interface RecordAttemptInput {
  deliveryId: string;
  owner: string;
  attempt: AttemptRecord | null;
  update: DeliveryUpdate;
  awaitStartSince?: number | undefined;
}

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
