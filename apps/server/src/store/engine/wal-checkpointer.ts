import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * Copies the write-ahead log into the database file on a thread of its own.
 *
 * SQLite checkpoints by itself inside the COMMIT that takes the WAL past 1,000 pages, on the
 * connection that commits: on the event loop, with a flush of the WAL and one of the database
 * file. Under `zekt bench` that happened every few hundred events and held every request behind it
 * for as long as the two flushes took; it was the tail of the end-to-end latency at 500 events/s.
 *
 * Here a worker thread with its own connection runs a PASSIVE checkpoint every `intervalMs`: it
 * never waits for the writer and the writer never waits for it (WAL allows one checkpointer beside
 * the writer and the readers). Once a checkpoint has copied every frame, the writer's next
 * transaction starts the log over. Under sustained load that moment rarely comes (the writer has
 * appended again by the time a checkpoint ends), so the log grows to `BACKSTOP_PAGES`, where the
 * server's connection checkpoints by itself as SQLite always did: by then the thread has copied
 * all but the last ~100 ms of frames, so that checkpoint on the event loop copies little, flushes
 * twice and starts the log over — about once per 64 MiB written (every few seconds at 500 events/s,
 * measured with `zekt bench`), where it was once per 4 MiB with every frame to copy.
 *
 * Durability is unchanged: a checkpoint only copies frames that are already committed, flushes the
 * log before copying and the database file after, and the log is reused only once both are done.
 */
export interface WalCheckpointer {
  close(): Promise<void>;
}

export const CHECKPOINT_INTERVAL_MS = 100;
/** The server connection's own automatic checkpoint, in pages of 4 KiB: 64 MiB of log. */
export const BACKSTOP_PAGES = 16_384;

// CommonJS evaluated in the worker: the thread needs no file of its own, so the same code runs
// from the build and from the sources under test.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
// This connection never writes; it must not checkpoint on its own schedule either.
db.pragma('wal_autocheckpoint = 0');
let timer = null;
const tick = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    // SQLITE_BUSY: another checkpoint is running (the server's backstop); try again next tick.
    if (!String(error && error.code).startsWith('SQLITE_BUSY')) parentPort.postMessage({ error: String(error) });
  }
  timer = setTimeout(tick, workerData.intervalMs);
};
timer = setTimeout(tick, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'close') return;
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
`;

export function startWalCheckpointer(options: {
  path: string;
  intervalMs?: number;
  onError?: (error: Error) => void;
}): WalCheckpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, path: options.path, intervalMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS },
  });
  // The thread must not keep a server that is otherwise done from exiting.
  worker.unref();
  worker.on('message', (message: { error?: string }) => {
    if (message.error) options.onError?.(new Error(`WAL checkpoint failed: ${message.error}`));
  });
  worker.on('error', (error) => options.onError?.(error));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async close() {
      // Waited for, the thread must keep the process alive until it is gone: unreferenced, a
      // process with nothing else left would end mid-close (exit 0, whatever its caller does next).
      worker.ref();
      worker.postMessage('close');
      await exited;
    },
  };
}
