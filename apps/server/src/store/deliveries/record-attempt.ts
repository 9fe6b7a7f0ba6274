import type { Kysely } from 'kysely';
import { hotQuery } from '../engine/compiled-query.js';
import type { Database } from '../schema.js';
import { attemptRow, type RecordAttemptInput } from './attempt-record.js';
import { updateLeasedQuery } from './update-leased.js';

/**
 * Records an attempt and the delivery's new state, releasing the lease, on SQLite or inside a
 * transaction (finish-attempt.ts). Writes nothing and returns undefined when `owner` no longer
 * holds the lease; else the delivery's connection and consumer. `awaitStartSince` starts the wait
 * for the consumer workflow (domain/not-started.ts) unless a report or a run seen by completion
 * tracking already moved the delivery on: a fast workflow can start before its dispatch's answer
 * is recorded.
 */
export async function recordLeasedAttempt(db: Kysely<Database>, input: RecordAttemptInput) {
  const { query, params } = updateLeasedQuery(input);
  const updated = (await query.execute(db, params)).rows[0];
  if (updated && input.attempt) {
    await insertAttemptQuery.execute(
      db,
      attemptRow(input.deliveryId, updated.subscription_id, input.attempt),
    );
  }
  return updated;
}

const insertAttemptQuery = hotQuery((db, p: ReturnType<typeof attemptRow>) =>
  db.insertInto('delivery_attempts').values({
    attempt_id: p.attempt_id,
    delivery_id: p.delivery_id,
    subscription_id: p.subscription_id,
    number: p.number,
    started_at: p.started_at,
    duration_ms: p.duration_ms,
    outcome: p.outcome,
    status_code: p.status_code,
    error_category: p.error_category,
    error_message: p.error_message,
    response_headers: p.response_headers,
  }),
);
