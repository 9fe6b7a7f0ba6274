import type { Kysely } from 'kysely';

/**
 * One trace per provider run: the W3C `traceparent` of an event's webhook span and of each
 * delivery's span, so the process that routes the event, or attempts, retries, replays or
 * recovers the delivery (any worker, minutes or days later) continues the trace the receiving
 * process began. Null for rows stored while tracing was off.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('trace_parent', 'text').execute();
  await db.schema.alterTable('deliveries').addColumn('trace_parent', 'text').execute();
}
