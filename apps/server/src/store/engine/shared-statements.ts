import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/**
 * Statements shared by the units of a group transaction (PostgreSQL, shared-transactions.ts).
 *
 * On PostgreSQL what a webhook costs is per statement, on both sides of the socket: the driver's
 * work and a socket write in the server, the wake-up and protocol work of the backend
 * (docs/performance.md). A shared statement is written once for many rows (its rows are one JSON
 * parameter, so its text is the same for any number of them and is prepared once). Outside a group
 * a call runs it at once for its one row. Inside a group the calls made while the group's units run
 * are collected and sent together as soon as every unit of the group still running waits on one
 * (or, should one be busy elsewhere, on `setImmediate`): the units of a group do the same steps in
 * the same order, so each step of all of them is one statement, and each caller gets its own row's
 * result once that statement is done. Waiting for `setImmediate` every time cost a whole turn of the
 * event loop per step under load, the turn that parses every request that arrived meanwhile.
 *
 * Units of one group run interleaved in one transaction and see each other's writes. What two
 * units may both touch is decided by the statement, as if the units had run one after the other:
 * calls whose `keys` meet (the same webhook GUID, the same run) go to the statement one after the
 * other, in the order they were made, never in one statement together.
 */
export interface SharedStatementOptions<P> {
  /** What the call writes that another call of the same statement may write too. */
  keys?: (params: P) => readonly string[];
}

export type SharedStatement<P, R> = (db: Kysely<Database>, params: P) => Promise<R>;

/** Runs the statement for `rows` on `db`: one result per row, in their order. */
type Runner<P, R> = (db: Kysely<Database>, rows: readonly P[]) => Promise<readonly R[]>;

interface Call {
  params: unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface Statement {
  run: Runner<unknown, unknown>;
  keys: ((params: unknown) => readonly string[]) | undefined;
}

/** The group and the unit each unit's handle on a group connection belongs to. */
const units = new WeakMap<Kysely<Database>, { group: StatementGroup; unit: number }>();

export function sharedStatement<P, R>(
  run: Runner<P, R>,
  options: SharedStatementOptions<P> = {},
): SharedStatement<P, R> {
  const statement: Statement = {
    run: run as Runner<unknown, unknown>,
    keys: options.keys as Statement['keys'],
  };
  return async (db, params) => {
    const member = units.get(db);
    if (member) return member.group.call(member.unit, statement, params) as Promise<R>;
    return (await run(db, [params]))[0] as R;
  };
}

/**
 * Gives each of a group's `count` units a handle on `db` (a connection a group transaction holds)
 * on which the shared statements are collected, until `close`. `done(i)`: unit i has settled, so
 * the others no longer wait for it. Calls still pending at `close` are rejected: a unit that called
 * one after the group ended would otherwise wait forever.
 */
export function collectSharedStatements(
  db: Kysely<Database>,
  count: number,
): { handles: Kysely<Database>[]; done(unit: number): void; close(): void } {
  const group = new StatementGroup(db, count);
  // A copy of the connection's Kysely per unit (same connection, no plugins): a call tells its
  // unit by the handle it was made on.
  const handles = Array.from({ length: count }, (_, unit) => {
    const handle = db.withoutPlugins();
    units.set(handle, { group, unit });
    return handle;
  });
  return {
    handles,
    done: (unit) => group.done(unit),
    close() {
      // The handles stay the group's: a call on one now is refused, never run on a connection
      // the pool may have given to someone else.
      group.abandon(new Error('a shared statement was called after its group transaction ended'));
    },
  };
}

class StatementGroup {
  private pending = new Map<Statement, Call[]>();
  private ended: Error | null = null;
  /** Units with a call pending, and units still running. */
  private waiting = new Set<number>();
  private live: number;
  private immediate = false;
  private soon = false;

  constructor(
    private readonly db: Kysely<Database>,
    count: number,
  ) {
    this.live = count;
  }

  call(unit: number, statement: Statement, params: unknown): Promise<unknown> {
    if (this.ended) return Promise.reject(this.ended);
    return new Promise((resolve, reject) => {
      let calls = this.pending.get(statement);
      if (!calls) {
        calls = [];
        this.pending.set(statement, calls);
      }
      calls.push({ params, resolve, reject });
      this.waiting.add(unit);
      this.flushWhenAllWait();
      if (!this.immediate) {
        this.immediate = true;
        // A unit busy with something else (a statement of its own) is not waited for past this.
        setImmediate(() => {
          this.immediate = false;
          this.flush();
        });
      }
    });
  }

  done(unit: number): void {
    this.live--;
    this.waiting.delete(unit);
    this.flushWhenAllWait();
  }

  abandon(error: Error): void {
    this.ended = error;
    for (const calls of this.pending.values()) for (const call of calls) call.reject(error);
    this.pending.clear();
  }

  private flushWhenAllWait(): void {
    if (this.soon || this.pending.size === 0 || this.waiting.size < this.live) return;
    this.soon = true;
    // After the current microtask: a unit makes all the calls it sends together before it waits.
    queueMicrotask(() => {
      this.soon = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.pending.size === 0) return;
    const pending = this.pending;
    this.pending = new Map();
    this.waiting.clear();
    // Different statements have different units' rows: their order does not matter. The
    // connection runs them one after another.
    for (const [statement, calls] of pending) void this.runRounds(statement, calls);
  }

  /** The calls in rounds where no key repeats, each round one statement, one after the other. */
  private async runRounds(statement: Statement, calls: Call[]): Promise<void> {
    for (const round of rounds(statement, calls)) {
      try {
        const results = await statement.run(
          this.db,
          round.map((call) => call.params),
        );
        round.forEach((call, i) => {
          call.resolve(results[i]);
        });
      } catch (error) {
        for (const call of round) call.reject(error);
      }
    }
  }
}

function rounds(statement: Statement, calls: Call[]): Call[][] {
  const keysOf = statement.keys;
  if (!keysOf) return [calls];
  const result: Array<{ calls: Call[]; keys: Set<string> }> = [];
  for (const call of calls) {
    const keys = keysOf(call.params);
    // After the last round holding one of its keys, so conflicting calls keep their order.
    let after = -1;
    result.forEach((round, i) => {
      if (keys.some((key) => round.keys.has(key))) after = i;
    });
    let round = result[after + 1];
    if (!round) {
      round = { calls: [], keys: new Set() };
      result.push(round);
    }
    round.calls.push(call);
    for (const key of keys) round.keys.add(key);
  }
  return result.map((round) => round.calls);
}
