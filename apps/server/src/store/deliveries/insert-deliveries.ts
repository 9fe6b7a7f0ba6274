import type { CompiledQuery, Kysely } from 'kysely';
import { executeCompiled } from '../engine/compiled-query.js';
import type { Database, NewDelivery } from '../schema.js';
import { newDeliveryRow } from './new-delivery-row.js';

/**
 * Inserts new deliveries. Rows made by `newDeliveryRow` (every delivery Zekt creates) go in by an
 * insert compiled once per row count, their values bound by position in `newDeliveryRow`'s column
 * order. Through a compiled query with named parameters (compiled-query.ts) each row's 42 values
 * went through an object keyed `0.delivery_id`, `0.event_id`, …, built and read back on every
 * call: 26–38 µs a row against 11–17 µs by position, on every routed webhook. Any other rows (a
 * column left out, more rows than `MAX_COMPILED_ROWS`) take Kysely's builder.
 */
export async function insertDeliveries(db: Kysely<Database>, deliveries: NewDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  const parameters = deliveries.length <= MAX_COMPILED_ROWS ? positionalValues(deliveries) : null;
  if (!parameters) {
    await db.insertInto('deliveries').values(deliveries).execute();
    return;
  }
  await executeCompiled(db, insertOf(db, deliveries.length), parameters);
}

/** An event routes to a handful of subscriptions: one compiled insert per row count up to this. */
const MAX_COMPILED_ROWS = 16;

/** A new delivery's row with every column set, in `newDeliveryRow`'s order. */
const FULL_ROW: NewDelivery = newDeliveryRow(
  {
    deliveryId: 'dlv_',
    eventId: 'evt_',
    subscriptionId: 'sub_',
    serviceId: 'svc_',
    providerAccountId: 0,
    providerRepositoryId: 0,
    consumerAccountId: 0,
    consumerRepositoryId: 0,
    correlationId: '',
    runAttempt: 0,
    eventType: '',
    durable: false,
  },
  0,
);
const COLUMNS = Object.keys(FULL_ROW) as Array<keyof NewDelivery>;

/** The rows' values in `COLUMNS` order, row after row; null when a row has other columns. */
function positionalValues(deliveries: NewDelivery[]): unknown[] | null {
  const values: unknown[] = [];
  for (const row of deliveries) {
    if (Object.keys(row).length !== COLUMNS.length) return null;
    for (const column of COLUMNS) {
      const value = row[column];
      // Kysely leaves an undefined value out of its SQL: such a row is not of this shape.
      if (value === undefined) return null;
      values.push(value);
    }
  }
  return values;
}

/** Per dialect adapter (what decides placeholders and quoting), the insert of n rows at [n]. */
const inserts = new WeakMap<object, CompiledQuery[]>();

function insertOf(db: Kysely<Database>, count: number): CompiledQuery {
  const adapter = db.getExecutor().adapter;
  let byCount = inserts.get(adapter);
  if (!byCount) {
    byCount = [];
    inserts.set(adapter, byCount);
  }
  let compiled = byCount[count];
  if (!compiled) {
    compiled = db
      .insertInto('deliveries')
      .values(Array.from({ length: count }, () => FULL_ROW))
      .compile();
    // Kysely binds every value as a parameter, row after row in the first row's column order.
    if (compiled.parameters.length !== count * COLUMNS.length)
      throw new Error(`insertDeliveries: ${compiled.parameters.length} parameters for ${count} rows`);
    byCount[count] = compiled;
  }
  return compiled;
}
