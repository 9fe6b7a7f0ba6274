import type { Kysely } from 'kysely';
import { newId } from '../domain/ids.js';
import type { SqlDialect } from './engine/dialect.js';
import { insertEvent, type NewEvent, newEventParams } from './events.js';
import { recordReceivedEventOnPostgres } from './received-event-on-postgres.js';
import type { Database } from './schema.js';
import { APP_WEBHOOK_ID, recordWebhookDelivery } from './webhook-deliveries.js';

/**
 * A completion webhook's receipt (its GUID through its hook, webhook-deliveries.ts) and, when the
 * GUID is new, its event (events.ts). `duplicate-receipt`: the GUID was processed already and
 * nothing was written; `eventId` null: the run key was received already (through another GUID).
 * One statement on PostgreSQL (received-event-on-postgres.ts), two on SQLite.
 */
export async function recordReceivedEvent(
  db: Kysely<Database>,
  dialect: SqlDialect,
  delivery: { guid: string; event: string; hookId: number | null },
  event: NewEvent,
  now: number,
): Promise<'duplicate-receipt' | { eventId: string | null }> {
  if (dialect === 'postgres') {
    const eventId = newId('evt', now);
    const received = await recordReceivedEventOnPostgres(db, {
      ...newEventParams(eventId, event, now),
      guid: delivery.guid,
      event: delivery.event,
      hookId: delivery.hookId ?? APP_WEBHOOK_ID,
    });
    return received.recorded ? { eventId: received.eventId } : 'duplicate-receipt';
  }
  if (!(await recordWebhookDelivery(db, delivery, now))) return 'duplicate-receipt';
  return { eventId: await insertEvent(db, event, now) };
}
