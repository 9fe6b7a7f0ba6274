import type { Kysely } from 'kysely';
import { newId } from '../domain/ids.js';
import { hotQuery } from './engine/compiled-query.js';
import type { Database, MessageRow } from './schema.js';

/** Messages sent by provider workflows through the message action, keyed by run key. */

export interface NewMessage {
  repositoryId: number;
  runId: number;
  runAttempt: number;
  accountId: number;
  workflowPath: string | null;
  eventType: string;
  payloadJson: string;
  payloadBytes: number;
  sender: Record<string, unknown>;
  /** The schema version each service checked the message against; null: none checked it. */
  schemaVersions?: Record<string, number> | null;
}

/**
 * Stores the message of a run key. A second message for the same run key replaces the first
 * while it is still pending; the caller checks that the run was not routed yet.
 */
export async function upsertMessage(
  db: Kysely<Database>,
  message: NewMessage,
  now: number,
): Promise<{ messageId: string; replaced: boolean }> {
  const existing = await getMessageByRunKey(db, message);
  const changes = {
    workflow_path: message.workflowPath,
    event_type: message.eventType,
    payload: message.payloadJson,
    payload_bytes: message.payloadBytes,
    sender: JSON.stringify(message.sender),
    schema_versions: message.schemaVersions ? JSON.stringify(message.schemaVersions) : null,
    updated_at: now,
  };
  // One statement either way, so two messages of the same run arriving together cannot collide.
  const row = await db
    .insertInto('messages')
    .values({
      message_id: newId('msg', now),
      repository_id: message.repositoryId,
      run_id: message.runId,
      run_attempt: message.runAttempt,
      account_id: message.accountId,
      status: 'pending',
      received_at: now,
      ...changes,
    })
    .onConflict((oc) => oc.columns(['repository_id', 'run_id', 'run_attempt']).doUpdateSet(changes))
    .returning('message_id')
    .executeTakeFirstOrThrow();
  return { messageId: row.message_id, replaced: existing !== undefined };
}

export async function getMessageByRunKey(
  db: Kysely<Database>,
  runKey: { repositoryId: number; runId: number; runAttempt: number },
): Promise<MessageRow | undefined> {
  const { repositoryId, runId, runAttempt } = runKey;
  return (await getMessageByRunKeyQuery.execute(db, { repositoryId, runId, runAttempt })).rows[0];
}

/** The read of a run's message, also a part of PostgreSQL's routing read (routing-read-on-postgres.ts). */
export const buildMessageByRunKey = (
  db: Kysely<Database>,
  p: { repositoryId: number; runId: number; runAttempt: number },
) =>
  db
    .selectFrom('messages')
    .selectAll()
    .where('repository_id', '=', p.repositoryId)
    .where('run_id', '=', p.runId)
    .where('run_attempt', '=', p.runAttempt);

const getMessageByRunKeyQuery = hotQuery(buildMessageByRunKey);

export async function markMessageRouted(db: Kysely<Database>, messageId: string, now: number): Promise<void> {
  await db
    .updateTable('messages')
    .set({ status: 'routed', updated_at: now })
    .where('message_id', '=', messageId)
    .execute();
}
