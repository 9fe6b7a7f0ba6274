import { CompiledQuery, type Kysely } from 'kysely';
import { sharedStatement } from './engine/shared-statements.js';
import type { Database, NewDelivery } from './schema.js';
import { addUsageRowsSql, type UsageCounts, usageRowsOf } from './usage.js';

/** What routing writes for one routed event on PostgreSQL, with the caller's usage counts. */
export interface RoutedEventWrites {
  /** The archive of its payload: none when it has no deliveries. */
  archive: {
    eventId: string;
    summaryJson: string;
    payloadJson: string | null;
    payloadBytes: number;
    expiresAt: number;
  } | null;
  deliveries: readonly NewDelivery[];
  finish: { eventId: string; messageId: string | null; deliveriesCreated: number };
  usage: UsageCounts | null;
  now: number;
}

/**
 * What routing writes for the events it routed, on PostgreSQL — the archives, the deliveries, the
 * events' route status and the usage counters that go with them — as one statement of
 * data-modifying CTEs for any number of events (a shared statement: engine/shared-statements.ts).
 * Rows travel as JSON parameters (`json_populate_recordset` takes the table's own column types), so
 * the text is one per set of delivery columns, whatever the number of rows. The events are
 * updated by their primary key: their rows are read with `zekt_rows` (migration 0018), taken for
 * one row, so the prepared statement's plan is that lookup whatever `events` holds.
 *
 * A delivery's columns are those whose value is defined (a column left out takes its default, as
 * Kysely's insert leaves it out). Rows of the same events with other columns than the first's are
 * inserted by a statement of their own, before.
 */
export const writeRoutedEventsOnPostgres = sharedStatement(
  async (db, calls: readonly RoutedEventWrites[]) => {
    const byColumns = new Map<string, NewDelivery[]>();
    for (const row of calls.flatMap((call) => call.deliveries)) {
      const columns = deliveryColumns(row);
      const rows = byColumns.get(columns);
      if (rows) rows.push(row);
      else byColumns.set(columns, [row]);
    }
    const [main, ...others] = [...byColumns];
    for (const [columns, rows] of others) await insertDeliveries(db, columns, rows);
    const archives = calls.flatMap(({ archive: a, now }) =>
      a
        ? [
            {
              event_id: a.eventId,
              summary: a.summaryJson,
              has_message: a.payloadJson !== null,
              payload: a.payloadJson,
              payload_bytes: a.payloadBytes,
              archived_at: now,
              expires_at: a.expiresAt,
            },
          ]
        : [],
    );
    const finished = calls.map(({ finish, now }) => ({
      event_id: finish.eventId,
      routed_at: now,
      message_id: finish.messageId,
      deliveries_created: finish.deliveriesCreated,
    }));
    const usage = usageRowsOf(calls.flatMap((call) => (call.usage ? [call.usage] : [])));
    await db.executeQuery(
      CompiledQuery.raw(routedWritesSql(main?.[0] ?? null), [
        JSON.stringify(archives),
        JSON.stringify(main?.[1] ?? []),
        JSON.stringify(finished),
        JSON.stringify(usage),
      ]),
    );
    return calls.map(() => undefined);
  },
);

function deliveryColumns(row: NewDelivery): string {
  const columns = Object.keys(row)
    .filter((column) => (row as Record<string, unknown>)[column] !== undefined)
    .sort()
    .join(',');
  // The names go into the SQL: the store's own column names, never input.
  if (!/^[a-z_,]+$/.test(columns)) throw new Error(`not a delivery column: ${columns}`);
  return columns;
}

async function insertDeliveries(db: Kysely<Database>, columns: string, rows: NewDelivery[]): Promise<void> {
  await db.executeQuery(
    CompiledQuery.raw(
      `insert into deliveries (${columns}) select ${columns} from json_populate_recordset(null::deliveries, $1::json)`,
      [JSON.stringify(rows)],
    ),
  );
}

const texts = new Map<string | null, string>();

function routedWritesSql(deliveryColumns: string | null): string {
  let text = texts.get(deliveryColumns);
  if (text !== undefined) return text;
  // With no deliveries $2 is still a parameter, and PostgreSQL must know its type.
  const deliveries =
    deliveryColumns === null
      ? 'delivery as (select $2::json as none), '
      : `delivery as (
  insert into deliveries (${deliveryColumns})
  select ${deliveryColumns} from json_populate_recordset(null::deliveries, $2::json)
), `;
  text = `with archive as (
  insert into archives (event_id, summary, has_message, payload, payload_bytes, archived_at, expires_at)
  select event_id, summary, has_message, payload, payload_bytes, archived_at, expires_at
  from json_populate_recordset(null::archives, $1::json)
), ${deliveries}finished as (
  update events set route_status = 'routed', routed_at = r.routed_at, message_id = r.message_id,
    deliveries_created = r.deliveries_created
  from (select r.* from zekt_rows($3::jsonb) e, jsonb_to_record(e) as r(event_id text, routed_at bigint,
    message_id text, deliveries_created integer)) r
  where events.event_id = r.event_id
), usage as (
${addUsageRowsSql(4)}
)
select 1 as written`;
  texts.set(deliveryColumns, text);
  return text;
}
