import type { Kysely } from 'kysely';
import { newId } from '../domain/ids.js';
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
}

/**
 * Stores the message of a run key. A second message for the same run key replaces the first
 * while it is still pending (SPEC 3.2); the caller checks that the run was not routed yet.
 */
export async function upsertMessage(
  db: Kysely<Database>,
  message: NewMessage,
  now: number,
): Promise<{ messageId: string; replaced: boolean }> {
  const existing = await getMessageByRunKey(db, message);
  if (existing) {
    await db
      .updateTable('messages')
      .set({
        workflow_path: message.workflowPath,
        event_type: message.eventType,
        payload: message.payloadJson,
        payload_bytes: message.payloadBytes,
        sender: JSON.stringify(message.sender),
        updated_at: now,
      })
      .where('message_id', '=', existing.message_id)
      .execute();
    return { messageId: existing.message_id, replaced: true };
  }
  const messageId = newId('msg', now);
  await db
    .insertInto('messages')
    .values({
      message_id: messageId,
      repository_id: message.repositoryId,
      run_id: message.runId,
      run_attempt: message.runAttempt,
      account_id: message.accountId,
      workflow_path: message.workflowPath,
      event_type: message.eventType,
      payload: message.payloadJson,
      payload_bytes: message.payloadBytes,
      sender: JSON.stringify(message.sender),
      status: 'pending',
      received_at: now,
      updated_at: now,
    })
    .execute();
  return { messageId, replaced: false };
}

export function getMessageByRunKey(
  db: Kysely<Database>,
  runKey: { repositoryId: number; runId: number; runAttempt: number },
): Promise<MessageRow | undefined> {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('repository_id', '=', runKey.repositoryId)
    .where('run_id', '=', runKey.runId)
    .where('run_attempt', '=', runKey.runAttempt)
    .executeTakeFirst();
}

export async function markMessageRouted(db: Kysely<Database>, messageId: string, now: number): Promise<void> {
  await db
    .updateTable('messages')
    .set({ status: 'routed', updated_at: now })
    .where('message_id', '=', messageId)
    .execute();
}
