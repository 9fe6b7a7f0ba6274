import type { Kysely, QueryCreator } from 'kysely';
import { hotQuery } from './engine/compiled-query.js';
import type { ArchiveRow, Database } from './schema.js';

/** Archived aggregated payloads, one per routed event: what replay and payload fetch read. */

export async function insertArchive(
  db: Kysely<Database>,
  archive: {
    eventId: string;
    /** The run summary as JSON text (`events.summary`), stored as it is. */
    summaryJson: string;
    payloadJson: string | null;
    payloadBytes: number;
    expiresAt: number;
  },
  now: number,
): Promise<void> {
  await insertArchiveQuery.execute(db, {
    eventId: archive.eventId,
    summary: archive.summaryJson,
    hasMessage: archive.payloadJson !== null,
    payload: archive.payloadJson,
    payloadBytes: archive.payloadBytes,
    now,
    expiresAt: archive.expiresAt,
  });
}

type ArchiveParams = {
  eventId: string;
  summary: string;
  hasMessage: boolean;
  payload: string | null;
  payloadBytes: number;
  now: number;
  expiresAt: number;
};

/** The archive's insert, compiled once. */
const buildInsertArchive = (db: QueryCreator<Database>, p: ArchiveParams) =>
  db.insertInto('archives').values({
    event_id: p.eventId,
    summary: p.summary,
    has_message: p.hasMessage,
    payload: p.payload,
    payload_bytes: p.payloadBytes,
    archived_at: p.now,
    expires_at: p.expiresAt,
  });

const insertArchiveQuery = hotQuery(buildInsertArchive);

export function getArchive(db: Kysely<Database>, eventId: string): Promise<ArchiveRow | undefined> {
  return db.selectFrom('archives').selectAll().where('event_id', '=', eventId).executeTakeFirst();
}
