import type { Kysely } from 'kysely';
import { insertArchive } from './archives.js';
import { hotDeliveriesParams, hotDeliveriesShape, insertDeliveries } from './deliveries/insert-deliveries.js';
import type { SqlDialect } from './engine/dialect.js';
import { finishRouting } from './events.js';
import { writeRoutedEventOnPostgres } from './routed-event-on-postgres.js';
import type { Database, NewDelivery } from './schema.js';

/**
 * What routing writes for an event it routed to at least one delivery: the archive of its payload,
 * the deliveries, and the event's route status. One statement on PostgreSQL
 * (routed-event-on-postgres.ts), three on SQLite, where a statement costs no round trip.
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
): Promise<void> {
  const shape = deliveries.length > 0 ? hotDeliveriesShape(deliveries) : null;
  if (dialect === 'postgres' && shape) {
    await writeRoutedEventOnPostgres(db, shape, {
      archive: {
        eventId: event.eventId,
        summary: event.summaryJson,
        hasMessage: event.payloadJson !== null,
        payload: event.payloadJson,
        payloadBytes: event.payloadBytes,
        now,
        expiresAt: event.archiveExpiresAt,
      },
      finish: {
        eventId: event.eventId,
        status: 'routed',
        now,
        messageId: event.messageId,
        deliveriesCreated: deliveries.length,
      },
      deliveries: hotDeliveriesParams(deliveries, shape),
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
}
