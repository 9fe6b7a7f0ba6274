import type { Kysely } from 'kysely';
import { insertArchive } from './archives.js';
import { insertDeliveries } from './deliveries/insert-deliveries.js';
import type { SqlDialect } from './engine/dialect.js';
import { finishRouting } from './events.js';
import { writeRoutedEventsOnPostgres } from './routed-event-on-postgres.js';
import type { Database, NewDelivery } from './schema.js';
import { countUsages, type UsageCounts } from './usage.js';

/**
 * What routing writes for an event it routed: the archive of its payload and the deliveries (when
 * there are any), and the event's route status, in the caller's transaction. Three statements on
 * SQLite, and the caller's usage counts last; on PostgreSQL one statement for all the events of a
 * group (routed-event-on-postgres.ts).
 */
export async function writeRoutedEvent(
  db: Kysely<Database>,
  dialect: SqlDialect,
  event: {
    eventId: string;
    /** The run summary as JSON text (`events.summary`), stored as it is. */
    summaryJson: string;
    payloadJson: string | null;
    payloadBytes: number;
    archiveExpiresAt: number;
    messageId: string | null;
  },
  deliveries: NewDelivery[],
  now: number,
  /** The caller's usage counts, written with the rest (on PostgreSQL, by the same statement). */
  usage?: UsageCounts,
): Promise<void> {
  if (dialect === 'postgres') {
    await writeRoutedEventsOnPostgres(db, {
      archive:
        deliveries.length > 0
          ? {
              eventId: event.eventId,
              summaryJson: event.summaryJson,
              payloadJson: event.payloadJson,
              payloadBytes: event.payloadBytes,
              expiresAt: event.archiveExpiresAt,
            }
          : null,
      deliveries,
      finish: { eventId: event.eventId, messageId: event.messageId, deliveriesCreated: deliveries.length },
      usage: usage ?? null,
      now,
    });
    return;
  }
  if (deliveries.length > 0) {
    await insertArchive(
      db,
      {
        eventId: event.eventId,
        summaryJson: event.summaryJson,
        payloadJson: event.payloadJson,
        payloadBytes: event.payloadBytes,
        expiresAt: event.archiveExpiresAt,
      },
      now,
    );
    await insertDeliveries(db, deliveries);
  }
  await finishRouting(
    db,
    event.eventId,
    { status: 'routed', messageId: event.messageId, deliveriesCreated: deliveries.length },
    now,
  );
  if (usage) await countUsages(db, dialect, usage.accountId, usage.counters, now);
}
