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
 * are collected and sent together on `setImmediate`: the units of a group do the same steps in the
 * same order, so each step of all of them is one statement, and each caller gets its own row's
 * result once that statement is done.
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

/** The group each group connection belongs to. */
const groups = new WeakMap<Kysely<Database>, StatementGroup>();

export function sharedStatement<P, R>(
  run: Runner<P, R>,
  options: SharedStatementOptions<P> = {},
): SharedStatement<P, R> {
  const statement: Statement = {
    run: run as Runner<unknown, unknown>,
    keys: options.keys as Statement['keys'],
  };
  return async (db, params) => {
    const group = groups.get(db);
    if (group) return group.call(statement, params) as Promise<R>;
    return (await run(db, [params]))[0] as R;
  };
}

/**
 * Makes `db` (a connection a group transaction holds) collect the shared statements called on it
 * until `close`. Calls still pending at `close` are rejected: a unit that called one after the group
 * ended would otherwise wait forever.
 */
export function collectSharedStatements(db: Kysely<Database>): { close(): void } {
  const group = new StatementGroup(db);
  groups.set(db, group);
  return {
    close() {
      groups.delete(db);
      group.abandon(new Error('a shared statement was called after its group transaction ended'));
    },
  };
}

class StatementGroup {
  private pending = new Map<Statement, Call[]>();
  private scheduled = false;

  constructor(private readonly db: Kysely<Database>) {}

  call(statement: Statement, params: unknown): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let calls = this.pending.get(statement);
      if (!calls) {
        calls = [];
        this.pending.set(statement, calls);
      }
      calls.push({ params, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // Every unit that can reach its next statement by now (microtasks only) has called it.
        setImmediate(() => this.flush());
      }
    });
  }

  abandon(error: Error): void {
    for (const calls of this.pending.values()) for (const call of calls) call.reject(error);
    this.pending.clear();
  }

  private flush(): void {
    this.scheduled = false;
    const pending = this.pending;
    this.pending = new Map();
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
