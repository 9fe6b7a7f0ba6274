import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { coalesced } from './coalesced.js';
import { type DirectRun, runDirectlyOn } from './direct-run.js';
import type { GroupSync } from './sqlite.js';

/**
 * Group commit for the embedded store. SQLite has one writer and `synchronous = FULL`
 * makes each COMMIT wait for the disk, on the event loop, so one transaction per request cost one
 * blocking disk flush per request. Here every transaction asked for during one turn of the event
 * loop runs inside a single `BEGIN IMMEDIATE … COMMIT`, each in a savepoint of its own:
 *
 * - each unit of work is still atomic: a unit that throws is rolled back to its savepoint alone and
 *   its caller gets the error, the others carry on;
 * - each sees the units before it as committed, exactly as if they had run one after another;
 * - every caller learns its result only once the COMMIT that contains its writes is on disk, so
 *   nothing is acknowledged before it is durable. If the COMMIT or the flush fails,
 *   every unit of the group fails with it.
 *
 * The flush itself leaves the event loop: the group commits with `synchronous = NORMAL` (the WAL
 * is written but not flushed) and then the WAL file is flushed with an asynchronous fsync, which
 * is exactly what `synchronous = FULL` does inside COMMIT, only on libuv's thread pool. The next
 * group runs meanwhile, and one flush covers every group committed before it started. Statements
 * outside groups keep `synchronous = FULL` (sqlite.ts, `GroupSync`).
 *
 * The group starts on `setImmediate`: the requests whose bytes arrived in the same poll phase of the
 * loop have all reached their transaction by then (the store's statements are synchronous, so a
 * group started at once would only ever hold one). Under no load a group is one transaction and
 * waits for nothing.
 *
 * A savepoint is not free: SQLite keeps a copy of every page a savepoint changes, to roll back to
 * (in memory: sqlite.ts). Units that may run twice (`rerunnable`: a shared transaction's, store.ts)
 * run first, without savepoints; should one of them fail, the group rolls back and runs again,
 * every unit but that one in a savepoint of its own, and that one's caller gets its error. The
 * other units run after them, each in a savepoint, as before. Either way the group's units take
 * effect as if they had run one after another, in that order.
 */
export interface GroupCommit {
  transaction<T>(work: (trx: Kysely<Database>) => Promise<T>, options?: UnitOptions): Promise<T>;
  /** Resolves once everything asked for so far is committed (or failed). */
  drain(): Promise<void>;
}

export interface UnitOptions {
  /**
   * `work` has no effect outside the transaction before it resolves, so it may run a second time
   * after its group rolled back: it runs without a savepoint of its own.
   */
  rerunnable?: boolean;
}

interface Unit {
  work: (trx: Kysely<Database>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  rerunnable: boolean;
}

type UnitResult = { ok: true; value: unknown } | { ok: false; error: unknown };

// The group's own statements, compiled once: they run several times per event.
const BEGIN = CompiledQuery.raw('begin immediate');
const SAVEPOINT = CompiledQuery.raw('savepoint unit');
const RELEASE = CompiledQuery.raw('release unit');
const ROLLBACK_TO = CompiledQuery.raw('rollback to unit');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

async function rollback(execute: (query: CompiledQuery) => unknown): Promise<void> {
  try {
    await execute(ROLLBACK);
  } catch {
    // The transaction is gone already (SQLite rolls back by itself on some errors).
  }
}

/** Units in one transaction at most: bounds how long one COMMIT holds the writer. */
const MAX_GROUP = 256;

export function createGroupCommit(
  db: Kysely<Database>,
  syncWal: () => Promise<void>,
  /** Relaxes `synchronous` while a group holds the connection (sqlite.ts). */
  sync: GroupSync,
  /** Runs statements on the connection at once while a group holds it (direct-run.ts). */
  run?: DirectRun,
): GroupCommit {
  const queue: Unit[] = [];
  let running: Promise<void> | null = null;
  // One flush covers every group committed before it started.
  const durable = coalesced(syncWal);
  const settling = new Set<Promise<void>>();

  async function runGroups(): Promise<void> {
    while (queue.length > 0) {
      await runGroup(queue.splice(0, MAX_GROUP));
      // Let requests that arrived meanwhile reach their transactions before the next group.
      if (queue.length > 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async function runGroup(group: Unit[]): Promise<void> {
    const results = new Map<Unit, UnitResult>();
    try {
      await db.connection().execute(async (connection) => {
        const release = run ? runDirectlyOn(connection, run) : () => false;
        const execute = (query: CompiledQuery) =>
          run ? run(query.sql, query.parameters) : connection.executeQuery(query);
        try {
          sync.enter();
          await runUnits(connection, execute);
        } finally {
          // runUnits has committed or rolled back by now.
          sync.leave();
          release();
        }
      });
    } catch (error) {
      // A lone unit's own error, or the group could not commit: nothing of it was written.
      for (const unit of group) unit.reject(error);
      return;
    }
    // Answer once the WAL holding this COMMIT is on disk; the next group need not wait for that.
    const settled: Promise<void> = durable()
      .then(
        () =>
          group.forEach((unit) => {
            const result = results.get(unit);
            if (result?.ok) unit.resolve(result.value);
            else unit.reject(result?.error);
          }),
        (error: unknown) => {
          for (const unit of group) unit.reject(error);
        },
      )
      .finally(() => settling.delete(settled));
    settling.add(settled);

    async function runUnits(
      connection: Kysely<Database>,
      execute: (query: CompiledQuery) => unknown,
    ): Promise<void> {
      await execute(BEGIN);
      try {
        if (group.length === 1) {
          const unit = group[0] as Unit;
          results.set(unit, { ok: true, value: await unit.work(connection) });
        } else {
          const failed = await withoutSavepoints(
            connection,
            group.filter((unit) => unit.rerunnable),
          );
          if (failed) {
            await rollback(execute);
            await execute(BEGIN);
          }
          // After a failure, every unit but that one, again: the first run's writes are rolled
          // back. Else the units that need a savepoint.
          await inSavepoints(
            connection,
            execute,
            group.filter((unit) => (failed ? unit !== failed : !unit.rerunnable)),
          );
        }
        await execute(COMMIT);
      } catch (error) {
        await rollback(execute);
        throw error;
      }
    }

    /** Runs `units` one after another; stops at the first that fails and returns it. */
    async function withoutSavepoints(
      connection: Kysely<Database>,
      units: readonly Unit[],
    ): Promise<Unit | undefined> {
      for (const unit of units) {
        try {
          results.set(unit, { ok: true, value: await unit.work(connection) });
        } catch (error) {
          results.set(unit, { ok: false, error });
          return unit;
        }
      }
      return undefined;
    }

    async function inSavepoints(
      connection: Kysely<Database>,
      execute: (query: CompiledQuery) => unknown,
      units: readonly Unit[],
    ): Promise<void> {
      for (const unit of units) {
        await execute(SAVEPOINT);
        try {
          const value = await unit.work(connection);
          await execute(RELEASE);
          results.set(unit, { ok: true, value });
        } catch (error) {
          await execute(ROLLBACK_TO);
          await execute(RELEASE);
          results.set(unit, { ok: false, error });
        }
      }
    }
  }

  function schedule(): void {
    if (running || queue.length === 0) return;
    running = new Promise<void>((started) => setImmediate(started)).then(runGroups).finally(() => {
      running = null;
      // A unit may have been asked for after the last group was taken.
      schedule();
    });
  }

  return {
    transaction<T>(work: (trx: Kysely<Database>) => Promise<T>, options: UnitOptions = {}): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({
          work,
          resolve: resolve as (value: unknown) => void,
          reject,
          rerunnable: options.rerunnable ?? false,
        });
        schedule();
      });
    },
    async drain() {
      while (running || settling.size > 0) {
        await running;
        await Promise.allSettled([...settling]);
      }
    },
  };
}
