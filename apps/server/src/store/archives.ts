import type { Kysely } from 'kysely';
import type { RunSummary } from '../domain/run-summary.js';
import type { ArchiveRow, Database } from './schema.js';

/** Archived aggregated payloads, one per routed event: what replay and payload fetch read. */

export async function insertArchive(
  db: Kysely<Database>,
  archive: {
    eventId: string;
    summary: RunSummary;
    payloadJson: string | null;
    payloadBytes: number;
    expiresAt: number;
  },
  now: number,
): Promise<void> {
  await db
    .insertInto('archives')
    .values({
      event_id: archive.eventId,
      summary: JSON.stringify(archive.summary),
      has_message: archive.payloadJson !== null,
      payload: archive.payloadJson,
      payload_bytes: archive.payloadBytes,
      archived_at: now,
      expires_at: archive.expiresAt,
    })
    .execute();
}

export function getArchive(db: Kysely<Database>, eventId: string): Promise<ArchiveRow | undefined> {
  return db.selectFrom('archives').selectAll().where('event_id', '=', eventId).executeTakeFirst();
}
