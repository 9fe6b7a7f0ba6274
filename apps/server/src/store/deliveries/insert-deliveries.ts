import type { Kysely, QueryCreator } from 'kysely';
import { hotQueryFamily } from '../engine/compiled-query.js';
import type { Database, NewDelivery } from '../schema.js';

export async function insertDeliveries(db: Kysely<Database>, deliveries: NewDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  const shape = hotDeliveriesShape(deliveries);
  if (!shape) {
    await db.insertInto('deliveries').values(deliveries).execute();
    return;
  }
  await insertDeliveriesQuery(shape).execute(db, hotDeliveriesParams(deliveries, shape));
}

/** How many rows a compiled insert of deliveries writes, and which columns. */
interface DeliveriesShape {
  count: number;
  columns: string[];
}

const MAX_HOT_DELIVERIES = 16;

/**
 * The shape of a compiled insert of these rows, or null when they take the builder: Kysely leaves
 * undefined values out of the SQL, so rows with different columns cannot share one text.
 */
function hotDeliveriesShape(deliveries: NewDelivery[]): DeliveriesShape | null {
  const columns = Object.keys(deliveries[0] as NewDelivery);
  const sameColumns = deliveries.every(
    (row) =>
      Object.keys(row).length === columns.length &&
      columns.every((c) => (row as Record<string, unknown>)[c] !== undefined),
  );
  if (!sameColumns || deliveries.length > MAX_HOT_DELIVERIES) return null;
  return { count: deliveries.length, columns };
}

function hotDeliveriesParams(deliveries: NewDelivery[], shape: DeliveriesShape): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  deliveries.forEach((row, i) => {
    for (const c of shape.columns) params[`${i}.${c}`] = (row as Record<string, unknown>)[c];
  });
  return params;
}

/** The insert of one shape. */
const buildInsertDeliveries =
  ({ count, columns }: DeliveriesShape) =>
  (db: QueryCreator<Database>, p: Record<string, unknown>) =>
    db
      .insertInto('deliveries')
      .values(
        Array.from(
          { length: count },
          (_, i) => Object.fromEntries(columns.map((c) => [c, p[`${i}.${c}`]])) as NewDelivery,
        ),
      );

// An event routes to a handful of subscriptions: one compiled statement per row count and columns.
const insertDeliveriesQuery = hotQueryFamily(
  ({ count, columns }: DeliveriesShape) => `${count}:${columns.join(',')}`,
  buildInsertDeliveries,
);
