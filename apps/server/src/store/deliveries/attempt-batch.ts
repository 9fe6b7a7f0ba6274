/**
 * Attempts the dispatcher finishes together, recorded together. On PostgreSQL each statement
 * costs a socket write, the driver's work and a backend wake-up, and under load that per-statement
 * cost, not the rows, was most of the server's CPU per event: one statement per finished attempt
 * is the largest share. Here every call made during one turn of the event loop is sent on
 * `setImmediate` in one statement (finish-attempts-together.ts):
 *
 * - each caller learns its own answer (recorded, or the lease was lost) only once that statement
 *   has completed; one statement is atomic, so no transaction is needed;
 * - if the statement fails, each call runs again alone, so one bad row never fails the others and
 *   each caller gets its own result or error;
 * - one statement cannot update a delivery twice, so a call for a delivery already in the batch
 *   starts the next one, sent only once the first has completed: as if they ran one after another.
 *
 * Under no load a batch is one call and waits for nothing but `setImmediate`.
 */
export interface AttemptBatch<I extends { deliveryId: string }> {
  finish(input: I): Promise<boolean>;
  /** Resolves once every call made so far has its answer. */
  drain(): Promise<void>;
}

/** Calls in one statement at most: bounds the statement's parameter and the time it holds its rows. */
export const MAX_ATTEMPT_BATCH = 256;

interface Call<I> {
  input: I;
  resolve: (recorded: boolean) => void;
  reject: (error: unknown) => void;
}

export function createAttemptBatch<I extends { deliveryId: string }>(statements: {
  /** Records every input in one statement; resolves with the deliveries it recorded. */
  together(inputs: I[]): Promise<ReadonlySet<string>>;
  /** Records one input with a statement of its own. */
  alone(input: I): Promise<boolean>;
}): AttemptBatch<I> {
  const queue: Call<I>[] = [];
  let scheduled = false;
  const sending = new Set<Promise<void>>();

  function flush(): void {
    scheduled = false;
    const batches = split(queue.splice(0));
    // Batches of one turn run in turn: a later one may hold a delivery an earlier one holds too.
    const sent = batches.reduce<Promise<void>>(
      (before, batch) => before.then(() => send(batch)),
      Promise.resolve(),
    );
    sending.add(sent);
    void sent.finally(() => sending.delete(sent));
  }

  async function send(batch: Call<I>[]): Promise<void> {
    let recorded: ReadonlySet<string>;
    try {
      recorded = await statements.together(batch.map((call) => call.input));
    } catch {
      await Promise.all(batch.map((call) => statements.alone(call.input).then(call.resolve, call.reject)));
      return;
    }
    for (const call of batch) call.resolve(recorded.has(call.input.deliveryId));
  }

  return {
    finish(input) {
      return new Promise<boolean>((resolve, reject) => {
        queue.push({ input, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    async drain() {
      while (scheduled || sending.size > 0) {
        // The flush scheduled before this immediate runs first and starts sending.
        if (scheduled) await new Promise((resolve) => setImmediate(resolve));
        await Promise.allSettled([...sending]);
      }
    },
  };

  /** Consecutive batches, each of distinct deliveries and at most MAX_ATTEMPT_BATCH calls. */
  function split(calls: Call<I>[]): Call<I>[][] {
    const batches: Call<I>[][] = [];
    let batch: Call<I>[] = [];
    let ids = new Set<string>();
    for (const call of calls) {
      if (batch.length === MAX_ATTEMPT_BATCH || ids.has(call.input.deliveryId)) {
        batches.push(batch);
        batch = [];
        ids = new Set();
      }
      batch.push(call);
      ids.add(call.input.deliveryId);
    }
    if (batch.length > 0) batches.push(batch);
    return batches;
  }
}
