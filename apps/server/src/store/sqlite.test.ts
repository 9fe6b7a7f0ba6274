import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openStore } from './store.js';
import { recordWebhookDelivery } from './webhook-deliveries.js';

describe('sqlite store', () => {
  it('runs in WAL mode with synchronous=FULL, and commits are visible to another connection', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zekt-sqlite-'));
    const path = join(dir, 'zekt.db');
    const store = await openStore({ kind: 'sqlite', path });
    try {
      await store.migrate();
      const journal = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(store.db);
      expect(journal.rows[0]?.journal_mode).toBe('wal');
      const synchronous = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
      expect(synchronous.rows[0]?.synchronous).toBe(2);
      await recordWebhookDelivery(store.db, { guid: 'kept', event: 'x', hookId: null }, 1);
      const other = await openStore({ kind: 'sqlite', path });
      expect(await recordWebhookDelivery(other.db, { guid: 'kept', event: 'x', hookId: null }, 2)).toBe(
        false,
      );
      await other.close();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
