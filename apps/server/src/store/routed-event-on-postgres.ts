import { CompiledQuery } from 'kysely';
import { sharedStatement } from './engine/shared-statements.js';
import type { NewDelivery } from './schema.js';

/**
 * What routing writes for the events it routed, on PostgreSQL: the archives, the deliveries and the
 * events' route status, each one statement for any number of events (shared statements:
 * engine/shared-statements.ts). Rows travel as one JSON parameter (`json_populate_recordset` takes
 * the table's own column types), so the SQL text is the same for any number of rows.
 */

export interface ArchiveInput {
  eventId: string;
  summaryJson: string;
  payloadJson: string | null;
  payloadBytes: number;
  expiresAt: number;
  now: number;
}

export const insertArchivesOnPostgres = sharedStatement(async (db, rows: readonly ArchiveInput[]) => {
  const input = JSON.stringify(
    rows.map((a) => ({
      event_id: a.eventId,
      summary: a.summaryJson,
      has_message: a.payloadJson !== null,
      payload: a.payloadJson,
      payload_bytes: a.payloadBytes,
      archived_at: a.now,
      expires_at: a.expiresAt,
    })),
  );
  await db.executeQuery(CompiledQuery.raw(INSERT_ARCHIVES, [input]));
  return rows.map(() => undefined);
});

const INSERT_ARCHIVES = `insert into archives (event_id, summary, has_message, payload, payload_bytes,
  archived_at, expires_at)
select event_id, summary, has_message, payload, payload_bytes, archived_at, expires_at
from json_populate_recordset(null::archives, $1::json)`;

/**
 * The deliveries of several events. A row's columns are those whose value is defined (a column
 * left out takes its default, as Kysely's insert leaves it out); rows with other columns than the
 * first go in a statement of their own.
 */
export const insertDeliveriesOnPostgres = sharedStatement(
  async (db, calls: readonly (readonly NewDelivery[])[]) => {
    const byColumns = new Map<string, NewDelivery[]>();
    for (const row of calls.flat()) {
      const columns = Object.keys(row)
        .filter((column) => (row as Record<string, unknown>)[column] !== undefined)
        .sort()
        .join(',');
      // The names go into the SQL: the store's own column names, never input.
      if (!/^[a-z_,]+$/.test(columns)) throw new Error(`not a delivery column: ${columns}`);
      const rows = byColumns.get(columns);
      if (rows) rows.push(row);
      else byColumns.set(columns, [row]);
    }
    for (const [columns, rows] of byColumns) {
      await db.executeQuery(
        CompiledQuery.raw(
          `insert into deliveries (${columns}) select ${columns} from json_populate_recordset(null::deliveries, $1::json)`,
          [JSON.stringify(rows)],
        ),
      );
    }
    return calls.map(() => undefined);
  },
);

export interface FinishRoutingInput {
  eventId: string;
  status: 'routed' | 'blocked';
  messageId: string | null;
  deliveriesCreated: number;
  now: number;
}

export const finishRoutingOnPostgres = sharedStatement(async (db, rows: readonly FinishRoutingInput[]) => {
  const input = JSON.stringify(
    rows.map((r) => ({
      event_id: r.eventId,
      route_status: r.status,
      routed_at: r.now,
      message_id: r.messageId,
      deliveries_created: r.deliveriesCreated,
    })),
  );
  await db.executeQuery(CompiledQuery.raw(FINISH_ROUTING, [input]));
  return rows.map(() => undefined);
});

const FINISH_ROUTING = `update events set route_status = r.route_status, routed_at = r.routed_at,
  message_id = r.message_id, deliveries_created = r.deliveries_created
from json_to_recordset($1::json) as r(event_id text, route_status text, routed_at bigint,
  message_id text, deliveries_created integer)
where events.event_id = r.event_id`;
