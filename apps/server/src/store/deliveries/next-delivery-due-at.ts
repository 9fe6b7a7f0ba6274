import type { Kysely } from 'kysely';
import { hotQuery } from '../engine/compiled-query.js';
import type { Database } from '../schema.js';

/**
 * When the next pending delivery not yet due at `after` becomes due (null: none): one seek in
 * `deliveries_due`. Deliveries already due at `after` are not asked about: the caller's claim at
 * `after` took every one it could, and the rest belong to installations at their in-flight cap,
 * whose next free slot wakes the dispatcher itself. Leases held by a worker that died are not
 * asked about either: they are reclaimed by the next poll after they expire. This used to read
 * every pending delivery (the minimum of lease expiry and due time has no index), once per pass
 * with nothing to claim: with a backlog of thousands, that scan cost more than the claims did.
 */
export async function nextDeliveryDueAt(db: Kysely<Database>, after: number): Promise<number | null> {
  const row = (await nextDueQuery.execute(db, { after })).rows[0];
  return row?.due ?? null;
}

const nextDueQuery = hotQuery((db, p: { after: number }) =>
  db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.min('next_attempt_at').as('due'))
    .where('dispatch_state', '=', 'pending')
    .where('next_attempt_at', '>', p.after),
);
