import type { Kysely } from 'kysely';
import { hotQueryFamily } from '../engine/compiled-query.js';
import type { Database, NewDelivery } from '../schema.js';

export async function insertDeliveries(db: Kysely<Database>, deliveries: NewDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  const columns = Object.keys(deliveries[0] as NewDelivery);
  // Kysely leaves undefined values out of the SQL: such rows take the builder.
  const sameColumns = deliveries.every(
    (row) =>
      Object.keys(row).length === columns.length &&
      columns.every((c) => (row as Record<string, unknown>)[c] !== undefined),
  );
  if (!sameColumns || deliveries.length > MAX_HOT_DELIVERIES) {
    await db.insertInto('deliveries').values(deliveries).execute();
    return;
  }
  // An event routes to a handful of subscriptions: one compiled statement per row count and columns.
  const query = insertDeliveriesQuery({ count: deliveries.length, columns });
  const params: Record<string, unknown> = {};
  deliveries.forEach((row, i) => {
    for (const c of columns) params[`${i}.${c}`] = (row as Record<string, unknown>)[c];
  });
  await query.execute(db, params);
}

const MAX_HOT_DELIVERIES = 16;
const insertDeliveriesQuery = hotQueryFamily(
  ({ count, columns }: { count: number; columns: string[] }) => `${count}:${columns.join(',')}`,
  ({ count, columns }) =>
    (db, p: Record<string, unknown>) =>
      db
        .insertInto('deliveries')
        .values(
          Array.from(
            { length: count },
            (_, i) => Object.fromEntries(columns.map((c) => [c, p[`${i}.${c}`]])) as NewDelivery,
          ),
        ),
);
