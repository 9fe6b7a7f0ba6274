import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { collectSharedStatements } from './shared-statements.js';

/**
 * Group commit with statements shared by the group, for PostgreSQL (docs/architecture.md, *The
 * store*). The units of work asked for during one turn of the event loop run together in one
 * transaction on one connection, interleaved: each of their shared statements (shared-statements.ts)
 * is sent once for all of them, and `BEGIN` and `COMMIT` once for the group. Per unit that divides
 * the round trips, the driver's work and PostgreSQL's per-statement work by the group's size.
 *
 * What it keeps:
 * - every caller learns its result only after the COMMIT that holds its writes;
 * - one unit never fails the others: if any unit throws (or a statement fails, which aborts the
 *   transaction for all), the group is rolled back and each unit runs again alone, in its own
 *   transaction, where it succeeds or fails on its own. So a unit's `work` may run twice: it must
 *   have no effect outside the transaction before its promise resolves (delivery/handoff.ts
 *   starts a reservation afresh on each run);
 * - units that write the same rows are decided by the shared statements, in the order they were
 *   made (their `keys`), as if they had run one after the other. A unit whose rows another unit may
 *   also write outside a shared statement does not belong in a group: only callers whose every
 *   such write is a shared statement use `sharedTransaction` (Store);
 * - locks in one order: a unit's first statement takes its locks (the run's advisory lock), and a
 *   shared statement takes a group's in key order, so two groups cannot deadlock on them.
 *
 * A unit alone (no load) runs as an ordinary transaction and waits for nothing.
 */
export interface SharedTransactions {
  transaction<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T>;
  /** Resolves once every unit asked for so far is settled. */
  drain(): Promise<void>;
}

interface Unit {
  work: (trx: Kysely<Database>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const BEGIN = CompiledQuery.raw('begin');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

export interface SharedTransactionOptions {
  /** Units in one group at most: bounds one statement's rows and how long one COMMIT waits. */
  maxGroup?: number;
  /** Groups running at once (each on a connection of its own). */
  maxGroups?: number;
}

export function createSharedTransactions(
  db: Kysely<Database>,
  options: SharedTransactionOptions = {},
): SharedTransactions {
  const maxGroup = options.maxGroup ?? 64;
  const maxGroups = options.maxGroups ?? 2;
  const queue: Unit[] = [];
  const running = new Set<Promise<void>>();
  let scheduled = false;

  function schedule(): void {
    if (scheduled || queue.length === 0 || running.size >= maxGroups) return;
    scheduled = true;
    // The requests whose bytes arrived in the same poll phase reach their transaction by then.
    setImmediate(() => {
      scheduled = false;
      while (queue.length > 0 && running.size < maxGroups) {
        const group = runGroup(queue.splice(0, maxGroup)).finally(() => {
          running.delete(group);
          schedule();
        });
        running.add(group);
      }
    });
  }

  async function runGroup(units: Unit[]): Promise<void> {
    if (units.length === 1) return runAlone(units[0] as Unit);
    let results: PromiseSettledResult<unknown>[];
    try {
      results = await db.connection().execute(async (connection) => {
        // Not waited for: the connection sends the units' first statement right after it, without
        // a turn of the event loop in between. A BEGIN that failed fails that statement too.
        const begun = connection.executeQuery(BEGIN);
        begun.catch(() => undefined);
        const statements = collectSharedStatements(connection, units.length);
        let settled: PromiseSettledResult<unknown>[];
        try {
          settled = await Promise.allSettled(
            units.map((unit, i) =>
              unit.work(statements.handles[i] as Kysely<Database>).finally(() => statements.done(i)),
            ),
          );
        } finally {
          statements.close();
        }
        await begun;
        if (settled.every((result) => result.status === 'fulfilled')) {
          await connection.executeQuery(COMMIT);
        } else {
          await connection.executeQuery(ROLLBACK);
        }
        return settled;
      });
    } catch (error) {
      // BEGIN, COMMIT or ROLLBACK failed: whether a COMMIT that failed took effect is unknown, as
      // for any transaction, so every unit gets the error.
      for (const unit of units) unit.reject(error);
      return;
    }
    if (results.every((result) => result.status === 'fulfilled')) {
      units.forEach((unit, i) => {
        unit.resolve((results[i] as PromiseFulfilledResult<unknown>).value);
      });
      return;
    }
    // Rolled back: nothing of the group was written. Each unit again, alone.
    await Promise.all(units.map(runAlone));
  }

  async function runAlone(unit: Unit): Promise<void> {
    try {
      unit.resolve(await db.transaction().execute(unit.work));
    } catch (error) {
      unit.reject(error);
    }
  }

  return {
    transaction<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      });
    },
    async drain() {
      while (queue.length > 0 || running.size > 0) {
        await Promise.allSettled([...running]);
        if (running.size === 0 && queue.length > 0) await new Promise((r) => setImmediate(r));
      }
    },
  };
}
