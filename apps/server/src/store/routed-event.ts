import type { Kysely } from 'kysely';
import { insertArchive } from './archives.js';
import { insertDeliveries } from './deliveries/insert-deliveries.js';
import type { SqlDialect } from './engine/dialect.js';
import { finishRouting } from './events.js';
import {
  finishRoutingOnPostgres,
  insertArchivesOnPostgres,
  insertDeliveriesOnPostgres,
} from './routed-event-on-postgres.js';
import type { Database, NewDelivery } from './schema.js';

/**
 * What routing writes for an event it routed: the archive of its payload and the deliveries (when
 * there are any), and the event's route status, in the caller's transaction. Three statements on
 * both stores; on PostgreSQL each is shared by the events of a group (routed-event-on-postgres.ts).
 * As one statement of data-modifying CTEs the server's peak RSS under load rose by ~55 MB, which
 * was not explained (docs/performance.md).
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
  if (dialect === 'postgres') {
    // Sent together: in a group they are flushed in one turn of the event loop, not three.
    await Promise.all([
      deliveries.length > 0 &&
        insertArchivesOnPostgres(db, {
          eventId: event.eventId,
          summaryJson: event.summaryJson,
          payloadJson: event.payloadJson,
          payloadBytes: event.payloadBytes,
          expiresAt: event.archiveExpiresAt,
          now,
        }),
      deliveries.length > 0 && insertDeliveriesOnPostgres(db, deliveries),
      finishRoutingOnPostgres(db, {
        eventId: event.eventId,
        status: 'routed',
        messageId: event.messageId,
        deliveriesCreated: deliveries.length,
        now,
      }),
    ]);
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
