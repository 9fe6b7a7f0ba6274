import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { BACKSTOP_PAGES, startWalCheckpointer } from './wal-checkpointer.js';

const CHUNK = 'x'.repeat(256 * 1024);
const WRITES = 40;

/**
 * Writes 40 transactions of 256 KiB (10 MiB in all, far under the 64 MiB backstop), pausing after
 * each as a server between groups does, and returns the WAL's largest size meanwhile.
 */
async function writeAndWatchWal(path: string, checkpoint: boolean): Promise<number> {
  const db = new BetterSqlite3(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  db.exec('create table blobs (id integer primary key, body text not null)');
  const checkpointer = checkpoint ? startWalCheckpointer({ path, intervalMs: 5 }) : null;
  const insert = db.prepare('insert into blobs (body) values (?)');
  let largest = 0;
  try {
    for (let i = 0; i < WRITES; i++) {
      insert.run(CHUNK);
      largest = Math.max(largest, statSync(`${path}-wal`).size);
      await delay(40);
    }
  } finally {
    await checkpointer?.close();
  }
  expect((db.prepare('select count(*) as n from blobs').get() as { n: number }).n).toBe(WRITES);
  db.close();
  return largest;
}

describe('the WAL checkpointer thread', () => {
  it('keeps the log short while the writer never checkpoints by itself, and loses nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zekt-wal-'));
    try {
      const without = await writeAndWatchWal(join(dir, 'alone.db'), false);
      const withThread = await writeAndWatchWal(join(dir, 'threaded.db'), true);
      // Alone, the log holds every write (the backstop is far away); with the thread it starts over
      // once a checkpoint caught up, so it never holds more than a few writes.
      expect(without).toBeGreaterThan(WRITES * CHUNK.length * 0.9);
      expect(withThread).toBeLessThan(without / 4);
      // Reopened from the files alone, the threaded store has every row.
      const reopened = new BetterSqlite3(join(dir, 'threaded.db'), { readonly: true });
      expect((reopened.prepare('select count(*) as n from blobs').get() as { n: number }).n).toBe(WRITES);
      reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
