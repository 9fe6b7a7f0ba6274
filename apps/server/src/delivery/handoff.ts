import type { Kysely } from 'kysely';
import type { ClaimedDelivery, DispatchContext } from '../store/dispatch-context.js';
import type { Database } from '../store/schema.js';

/**
 * Lease at creation. A delivery created while this process's dispatcher has room for
 * it (a free slot in its pool and under its installation's cap) is leased to the dispatcher in
 * the very transaction that creates it, and its attempt starts as soon as that transaction is
 * durable, with the context routing has just read: no claim, no second transaction and flush, no
 * wait for the dispatch loop.
 *
 * Nothing else changes. The lease is written with the row, so the claim rule holds (a claim is
 * durable before GitHub is called: a non-durable delivery is never sent twice); a process that
 * dies before the attempt leaves a lease that expires like any other; a delivery created while
 * the dispatcher has no room waits in the table for a claim, as every delivery did before.
 */
export interface DeliveryHandoff {
  /**
   * Asked in the creating transaction: the lease to write into a new delivery to this consumer
   * installation, holding a slot of the pool and of the installation until `start` or `release`;
   * null when there is no room (the delivery is created unleased).
   */
  reserve(consumerAccountId: number): { owner: string; expiresAt: number } | null;
  /** The creating transaction is durable: attempt these deliveries, in their reserved slots. */
  start(handed: readonly HandedDelivery[]): void;
  /** The creating transaction failed: give these installations' reserved slots back. */
  release(consumerAccountIds: readonly number[]): void;
}

/** A delivery leased at creation, with what its attempt needs. */
export interface HandedDelivery {
  row: ClaimedDelivery;
  context: DispatchContext;
}

/** What the creating transaction uses: `reserve`, then `hand` each delivery created with the lease. */
export interface HandoffInTransaction {
  reserve(consumerAccountId: number): { owner: string; expiresAt: number } | null;
  hand(delivery: HandedDelivery): void;
}

/**
 * Runs `work` in `transaction` (a store transaction, resolved once durable) with a handoff for the
 * deliveries it creates: they start when it resolves, and every slot it reserved is given back
 * if it rejects, so a rolled-back unit or a failed COMMIT never leaks a slot. A shared transaction
 * may run `work` a second time after its group rolled back (store/engine/shared-transactions.ts):
 * each run starts afresh, with what the run before reserved given back.
 */
export async function withHandoff<T>(
  handoff: DeliveryHandoff | undefined,
  transaction: <U>(work: (trx: Kysely<Database>) => Promise<U>) => Promise<U>,
  work: (trx: Kysely<Database>, handoff: HandoffInTransaction | undefined) => Promise<T>,
): Promise<T> {
  if (!handoff) return transaction((trx) => work(trx, undefined));
  let reserved: number[] = [];
  let handed: HandedDelivery[] = [];
  const inTransaction: HandoffInTransaction = {
    reserve(consumerAccountId) {
      const lease = handoff.reserve(consumerAccountId);
      if (lease) reserved.push(consumerAccountId);
      return lease;
    },
    hand(delivery) {
      handed.push(delivery);
    },
  };
  let result: T;
  try {
    result = await transaction((trx) => {
      if (reserved.length > 0) handoff.release(reserved);
      reserved = [];
      handed = [];
      return work(trx, inTransaction);
    });
  } catch (error) {
    handoff.release(reserved);
    throw error;
  }
  // A slot reserved for a delivery that was not handed (none today) is given back, never held.
  const unused = [...reserved];
  for (const { row } of handed) {
    const at = unused.indexOf(row.consumer_account_id);
    if (at >= 0) unused.splice(at, 1);
  }
  if (unused.length > 0) handoff.release(unused);
  handoff.start(handed);
  return result;
}
