import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTempStore } from '../../../test/support/temp-store.js';
import type { NewDelivery } from '../schema.js';
import type { Store } from '../store.js';
import { insertDeliveries } from './insert-deliveries.js';
import { newDeliveryRow } from './new-delivery-row.js';

/**
 * Deliveries go in by position (a compiled insert per row count) when they have every column of
 * `newDeliveryRow`, by Kysely's builder otherwise: both write each value to its own column.
 */
describe('insertDeliveries', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeEach(async () => {
    ({ store, dispose } = await openTempStore());
  });
  afterEach(() => dispose());

  // Every column a value of its own, so a value bound one place off cannot go unseen.
  const row = (n: number): NewDelivery => ({
    ...newDeliveryRow(
      {
        deliveryId: `dlv_${n}`,
        eventId: `evt_${n}`,
        subscriptionId: `sub_${n}`,
        serviceId: `svc_${n}`,
        providerAccountId: n + 1,
        providerRepositoryId: n + 2,
        consumerAccountId: n + 3,
        consumerRepositoryId: n + 4,
        correlationId: `${n + 5}`,
        runAttempt: n + 6,
        eventType: `type-${n}`,
        durable: true,
        retryNumber: n + 7,
        replayOf: `dlv_replayed_${n}`,
        traceParent: `00-${n}`,
        schemaVersion: n + 8,
      },
      1_000 + n,
    ),
    lease_owner: `worker-${n}`,
    lease_expires_at: 2_000 + n,
    platform_response: `response-${n}`,
    consumer_run_url: `https://example.test/${n}`,
    slot_reserved: true,
  });

  const stored = async (ids: string[]) =>
    (
      await store.db
        .selectFrom('deliveries')
        .selectAll()
        .where('delivery_id', 'in', ids)
        .orderBy('delivery_id')
        .execute()
    ).map((r) => r as unknown as Record<string, unknown>);
  // SQLite stores a flag as 1/0.
  const asStored = (delivery: NewDelivery) =>
    Object.fromEntries(Object.entries(delivery).map(([k, v]) => [k, typeof v === 'boolean' ? Number(v) : v]));

  it('writes every column of full rows, one or several at once', async () => {
    const rows = [row(1), row(2), row(3)];
    await store.transaction((trx) => insertDeliveries(trx, rows.slice(0, 1)));
    await store.transaction((trx) => insertDeliveries(trx, rows.slice(1)));
    expect(await stored(['dlv_1', 'dlv_2', 'dlv_3'])).toEqual(rows.map(asStored));
  });

  it('takes the builder for a row without every column, and for more rows than are compiled', async () => {
    const { trace_parent: _left, ...partial } = row(4);
    await insertDeliveries(store.db, [partial]);
    expect(await stored(['dlv_4'])).toEqual([{ ...asStored(partial), trace_parent: null }]);
    const many = Array.from({ length: 20 }, (_, i) => row(100 + i));
    await insertDeliveries(store.db, many);
    expect(await stored(many.map((r) => r.delivery_id as string))).toEqual(many.map(asStored));
  });
});
