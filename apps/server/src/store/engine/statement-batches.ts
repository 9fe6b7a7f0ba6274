/**
 * Calls of one statement made during one turn of the event loop, sent as one statement outside any
 * transaction (PostgreSQL). On PostgreSQL each statement costs a socket write, the driver's work
 * and a backend wake-up, and under load that per-statement cost, not the rows, is most of what a
 * write costs; a transaction adds BEGIN and COMMIT, two more round trips. A write that is one
 * statement (data-modifying CTEs run atomically) needs no transaction, and the writes of many
 * callers can be that one statement:
 *
 * - each caller learns its own answer only once the statement holding its row has completed, so
 *   nothing is acknowledged before it is committed;
 * - if the statement fails, each call runs again alone, so one bad row never fails the others and
 *   each caller gets its own result or error;
 * - calls whose `keys` meet (one statement cannot update a row twice, and a later call must see an
 *   earlier one) go to consecutive statements, the next sent once the first has completed: as if
 *   they ran one after another;
 * - at most `maxInFlight` statements are under way; calls made meanwhile wait for one to complete
 *   and go together in the next, so a busy database gets fewer, larger statements.
 *
 * Under no load a batch is one call and waits for nothing but `setImmediate`.
 */
export interface StatementBatch<I, R> {
  run(input: I): Promise<R>;
  /** Resolves once every call made so far has its answer. */
  drain(): Promise<void>;
}

export interface StatementBatchOptions<I, R> {
  /** Runs every input in one statement; one result per input, in their order. */
  together(inputs: I[]): Promise<readonly R[]>;
  /** Runs one input in a statement of its own. */
  alone(input: I): Promise<R>;
  /** What a call writes that another call may write too. */
  keys(input: I): readonly string[];
  /** Calls in one statement at most: bounds its parameter and the time it holds its rows. */
  maxBatch?: number;
  /** Statements under way at once (default: no bound). */
  maxInFlight?: number;
}

interface Call<I, R> {
  input: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export function createStatementBatch<I, R>(options: StatementBatchOptions<I, R>): StatementBatch<I, R> {
  const maxBatch = options.maxBatch ?? 256;
  const maxInFlight = options.maxInFlight ?? Number.POSITIVE_INFINITY;
  const queue: Call<I, R>[] = [];
  let scheduled = false;
  const sending = new Set<Promise<void>>();

  function schedule(): void {
    if (scheduled || queue.length === 0 || sending.size >= maxInFlight) return;
    scheduled = true;
    setImmediate(flush);
  }

  function flush(): void {
    scheduled = false;
    // Batches of one turn run in turn: a later one may hold a key an earlier one holds too.
    const sent = split(queue.splice(0)).reduce<Promise<void>>(
      (before, batch) => before.then(() => send(batch)),
      Promise.resolve(),
    );
    sending.add(sent);
    void sent.finally(() => {
      sending.delete(sent);
      schedule();
    });
  }

  async function send(batch: Call<I, R>[]): Promise<void> {
    let results: readonly R[];
    try {
      results = await options.together(batch.map((call) => call.input));
    } catch {
      await Promise.all(batch.map((call) => options.alone(call.input).then(call.resolve, call.reject)));
      return;
    }
    batch.forEach((call, i) => {
      call.resolve(results[i] as R);
    });
  }

  /** Consecutive batches, each without a repeated key and of at most `maxBatch` calls. */
  function split(calls: Call<I, R>[]): Call<I, R>[][] {
    const batches: Call<I, R>[][] = [];
    let batch: Call<I, R>[] = [];
    let keys = new Set<string>();
    for (const call of calls) {
      const own = options.keys(call.input);
      if (batch.length === maxBatch || own.some((key) => keys.has(key))) {
        batches.push(batch);
        batch = [];
        keys = new Set();
      }
      batch.push(call);
      for (const key of own) keys.add(key);
    }
    if (batch.length > 0) batches.push(batch);
    return batches;
  }

  return {
    run(input) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ input, resolve, reject });
        schedule();
      });
    },
    async drain() {
      while (scheduled || sending.size > 0 || queue.length > 0) {
        // The flush scheduled before this immediate runs first and starts sending.
        if (scheduled || sending.size === 0) await new Promise((resolve) => setImmediate(resolve));
        await Promise.allSettled([...sending]);
      }
    },
  };
}
