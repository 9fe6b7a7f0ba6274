import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { MAX_REPORTED_ERRORS, type SchemaProblem } from '../domain/message-schema.js';
import { compileProblemOf, type RawCompileProblem, type RawViolation, violationOf } from './schema-errors.js';
import { SCHEMA_WORKER_SOURCE } from './schema-worker-source.js';

/**
 * Schemas are compiled and messages checked on threads of their own, each check with a bound on
 * the CPU time it may use.
 * A JSON Schema can make a check take exponential time without any regular expression — `anyOf`
 * branches that recurse through `$ref` re-check the same subtree once per branch at every level
 * (2^20 checks for 20 levels of nesting), `uniqueItems` compares every pair of a large array —
 * so refusing bad patterns when a schema is saved is not enough (docs/contracts.md has the
 * figures). Off the event loop, a slow check delays nothing else the process does; past its bound
 * (CPU time the checking thread used, read from /proc on Linux, so a check that only waited for a
 * core on a busy machine is not stopped; wall time elsewhere) the thread is stopped (`Worker.terminate` interrupts the running JavaScript) and replaced, and
 * the check counts as failed: an enforced schema refuses the message, since it could not be shown
 * to conform. Patterns are matched by a linear-time engine (schema-worker-source.ts), so they never
 * come near the bound.
 */
export interface SchemaCheckPool {
  /** Checks that `schema` compiles (and `example`, when given, against it). */
  compile(schema: unknown, example?: unknown): Promise<CompileOutcome>;
  /**
   * Checks a message against the schema `key` names (a service and a version: what it names never
   * changes). `loadSchema` is called only when the thread that takes the check has not compiled it.
   */
  validate(check: {
    key: string;
    loadSchema: () => Promise<string>;
    payloadJson: string;
  }): Promise<ValidationOutcome>;
  close(): Promise<void>;
}

export type CompileOutcome =
  | {
      ok: true;
      /** The schema refuses `null`: a run without a message breaks it. */
      requiresMessage: boolean;
      example: { errors: SchemaProblem[]; errorCount: number } | null;
    }
  | { ok: false; problem: SchemaProblem };

export interface ValidationOutcome {
  errors: SchemaProblem[];
  errorCount: number;
  /** The check was stopped (time bound, or the thread's memory): the message is not shown to conform. */
  timedOut: boolean;
}

export interface SchemaCheckPoolOptions {
  /** Threads that check (ZEKT_SCHEMA_WORKERS); each is started when first needed. */
  threads: number;
  /** CPU time one message's check may use, after its schema is compiled (ZEKT_SCHEMA_VALIDATION_TIMEOUT_MS). */
  validationTimeoutMs: number;
  /** One schema's compilation: when it is saved, and the first time a thread checks with it. */
  compileTimeoutMs: number;
  /** Compiled schemas one thread keeps (the least recently used are forgotten beyond it). */
  maxCompiledPerThread?: number;
  /** Told each time a check or a compilation is stopped, with why. */
  onStopped?: (reason: 'timeout' | 'memory') => void;
  /** Reads a thread's CPU time (ms) by its kernel id; default /proc. Tests pass their own. */
  threadCpuMs?: (tid: number | null) => number | null;
}

/** A thread's heap: far above what a 512 KB message and a 64 KB schema need, far below the process's. */
const THREAD_HEAP_MB = 192;

interface Job {
  run(thread: Thread): Promise<void>;
  fail(error: Error): void;
}

interface Thread {
  worker: Worker;
  ready: boolean;
  busy: boolean;
  /** Keys this thread has compiled, least recently used first (mirrors the thread's own map). */
  keys: Map<string, true>;
  /** The answer the running job waits for. */
  answer: ((message: Record<string, unknown>) => void) | null;
  /** The running job's schema is compiled: its check is timed from now. */
  compiled: (() => void) | null;
  /** Ends the running job when the thread dies under it. */
  died: ((reason: 'timeout' | 'memory') => void) | null;
  /** The thread's id in the kernel (Linux), to read its CPU time; null elsewhere. */
  tid: number | null;
}

/**
 * The CPU time a thread has used, in ms, from /proc (Linux; clock ticks of 10 ms); null where
 * it cannot be read. A bound on wall time would stop valid checks on a machine too busy to run
 * them: what the bound must catch is a check that keeps a core busy, not one that waits for it.
 */
function threadCpuMs(tid: number | null): number | null {
  if (tid === null) return null;
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, the 14th and 15th fields of the line (11th and 12th after the name).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** However busy the machine, a check never waits longer than this many times its bound. */
const WALL_FACTOR = 40;

export function createSchemaCheckPool(options: SchemaCheckPoolOptions): SchemaCheckPool {
  const maxCompiled = options.maxCompiledPerThread ?? 200;
  const cpuMs = options.threadCpuMs ?? threadCpuMs;
  const threads: Thread[] = [];
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;

  function start(): Thread {
    const worker = new Worker(SCHEMA_WORKER_SOURCE, {
      eval: true,
      workerData: { from: import.meta.url },
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
    });
    // Checking threads must not keep a server that is otherwise done from exiting.
    worker.unref();
    const thread: Thread = {
      worker,
      ready: false,
      busy: false,
      keys: new Map(),
      answer: null,
      compiled: null,
      died: null,
      tid: null,
    };
    worker.on('message', (message: Record<string, unknown>) => {
      if (message.ready === true) {
        thread.ready = true;
        thread.tid = typeof message.tid === 'number' ? message.tid : null;
        pump();
        return;
      }
      if (message.compiled === true) {
        thread.compiled?.();
        return;
      }
      const answer = thread.answer;
      thread.answer = null;
      answer?.(message);
    });
    const lose = (reason: 'timeout' | 'memory') => {
      const index = threads.indexOf(thread);
      if (index !== -1) threads.splice(index, 1);
      thread.died?.(reason);
      if (!closed) pump();
    };
    // ERR_WORKER_OUT_OF_MEMORY, or the thread ended for any other reason: its job has failed.
    worker.on('error', () => lose('memory'));
    worker.on('exit', () => lose('memory'));
    threads.push(thread);
    return thread;
  }

  function pump(): void {
    while (queue.length > 0 && !closed) {
      let idle = threads.find((t) => t.ready && !t.busy);
      if (idle === undefined) {
        if (threads.length < options.threads) start();
        return;
      }
      const job = queue.shift()!;
      idle.busy = true;
      const thread = idle;
      job
        .run(thread)
        .catch((error: unknown) => job.fail(error as Error))
        .finally(() => {
          thread.busy = false;
          pump();
        });
      idle = undefined;
    }
  }

  /**
   * Sends one message to the thread and waits for its answer while the thread has used less than
   * `timeoutMs` of CPU (`thenMs` once the thread says it compiled the job's schema), and at most
   * WALL_FACTOR times that in all; past it the thread is stopped.
   */
  function ask(
    thread: Thread,
    message: Record<string, unknown>,
    timeoutMs: number,
    thenMs = timeoutMs,
  ): Promise<Record<string, unknown> | { stopped: 'timeout' | 'memory' }> {
    return new Promise((resolve) => {
      const settle = () => {
        clearTimeout(timer);
        thread.answer = null;
        thread.compiled = null;
        thread.died = null;
      };
      const stop = () => {
        settle();
        const index = threads.indexOf(thread);
        if (index !== -1) threads.splice(index, 1);
        void thread.worker.terminate();
        options.onStopped?.('timeout');
        resolve({ stopped: 'timeout' });
      };
      let boundMs = timeoutMs;
      let cpuFrom = cpuMs(thread.tid);
      let wallUntil = Date.now() + boundMs * WALL_FACTOR;
      const expire = () => {
        const cpu = cpuMs(thread.tid);
        const used = cpu === null || cpuFrom === null ? null : cpu - cpuFrom;
        if (used === null || used >= boundMs || Date.now() >= wallUntil) return stop();
        // Waited for a core rather than used one: wait for what is left of the bound.
        timer = setTimeout(expire, Math.max(boundMs - used, 10));
      };
      let timer = setTimeout(expire, timeoutMs);
      thread.compiled = () => {
        clearTimeout(timer);
        boundMs = thenMs;
        cpuFrom = cpuMs(thread.tid);
        wallUntil = Date.now() + boundMs * WALL_FACTOR;
        timer = setTimeout(expire, thenMs);
      };
      thread.answer = (answer) => {
        settle();
        resolve(answer);
      };
      thread.died = (reason) => {
        settle();
        options.onStopped?.(reason);
        resolve({ stopped: reason });
      };
      thread.worker.postMessage({ id: nextId++, ...message });
    });
  }

  function enqueue<T>(run: (thread: Thread) => Promise<T>): Promise<T> {
    if (closed) return Promise.reject(new Error('the schema check pool is closed'));
    return new Promise<T>((resolve, reject) => {
      queue.push({ run: async (thread) => resolve(await run(thread)), fail: reject });
      pump();
    });
  }

  function remember(thread: Thread, key: string): void {
    thread.keys.delete(key);
    thread.keys.set(key, true);
    if (thread.keys.size <= maxCompiled) return;
    const forget = [...thread.keys.keys()].slice(0, thread.keys.size - maxCompiled);
    for (const old of forget) thread.keys.delete(old);
    thread.worker.postMessage({ op: 'forget', keys: forget });
  }

  return {
    compile(schema, example) {
      const schemaText = JSON.stringify(schema);
      const exampleJson = example === undefined ? undefined : JSON.stringify(example);
      return enqueue(async (thread): Promise<CompileOutcome> => {
        const answer = await ask(
          thread,
          { op: 'compile', schemaText, exampleJson, maxErrors: MAX_REPORTED_ERRORS },
          options.compileTimeoutMs,
        );
        if ('stopped' in answer) {
          return {
            ok: false,
            problem: {
              pointer: '',
              message:
                answer.stopped === 'timeout'
                  ? `the schema took longer than ${options.compileTimeoutMs} ms to compile and was stopped: make it smaller or simpler`
                  : 'compiling the schema ran out of memory: make it smaller or simpler',
            },
          };
        }
        if (answer.ok !== true) {
          return {
            ok: false,
            problem: compileProblemOf(answer.problem as RawCompileProblem, schema as never),
          };
        }
        const raw = answer.example as { errors: RawViolation[]; errorCount: number } | null;
        return {
          ok: true,
          requiresMessage: answer.requiresMessage === true,
          example: raw === null ? null : { errors: raw.errors.map(violationOf), errorCount: raw.errorCount },
        };
      });
    },

    validate(check) {
      return enqueue(async (thread): Promise<ValidationOutcome> => {
        for (let attempt = 0; ; attempt++) {
          const cached = thread.keys.has(check.key);
          const schemaText = cached ? undefined : await check.loadSchema();
          const answer = await ask(
            thread,
            {
              op: 'validate',
              key: check.key,
              schemaText,
              payloadJson: check.payloadJson,
              maxErrors: MAX_REPORTED_ERRORS,
            },
            cached ? options.validationTimeoutMs : options.compileTimeoutMs,
            options.validationTimeoutMs,
          );
          if ('stopped' in answer) {
            return stoppedCheck(answer.stopped as 'timeout' | 'memory', options.validationTimeoutMs);
          }
          if (answer.missing === true && attempt === 0) {
            thread.keys.delete(check.key);
            continue;
          }
          if (answer.invalid !== undefined) {
            const problem = compileProblemOf(answer.invalid as RawCompileProblem, {});
            return {
              errors: [{ pointer: '', message: `the schema no longer compiles: ${problem.message}` }],
              errorCount: 1,
              timedOut: false,
            };
          }
          remember(thread, check.key);
          const errors = (answer.errors as RawViolation[]).map(violationOf);
          return { errors, errorCount: answer.errorCount as number, timedOut: false };
        }
      });
    },

    async close() {
      closed = true;
      for (const job of queue.splice(0)) job.fail(new Error('the schema check pool is closed'));
      await Promise.all(threads.splice(0).map((t) => t.worker.terminate()));
    },
  };
}

function stoppedCheck(reason: 'timeout' | 'memory', validationTimeoutMs: number): ValidationOutcome {
  return {
    errors: [
      {
        pointer: '',
        message:
          reason === 'timeout'
            ? `checking the message took longer than ${validationTimeoutMs} ms and was stopped (ZEKT_SCHEMA_VALIDATION_TIMEOUT_MS): simplify the schema (anyOf or oneOf that recurse through $ref, uniqueItems on large arrays)`
            : 'checking the message ran out of memory and was stopped: simplify the schema or send a smaller message',
      },
    ],
    errorCount: 1,
    timedOut: true,
  };
}
