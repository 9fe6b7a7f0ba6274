import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openTempStore } from '../test-support/temp-store.js';
import { describeStoreContract } from './store.contract.js';
import { openStore } from './store.js';
import { recordWebhookDelivery } from './webhook-deliveries.js';

describeStoreContract('sqlite', openTempStore);

describe('sqlite store', () => {
  it('runs in WAL mode with synchronous=FULL, and commits are visible to another connection', async () => {
    const temp = await openTempStore();
    try {
      const journal = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(temp.store.db);
      expect(journal.rows[0]?.journal_mode).toBe('wal');
      const synchronous = await sql<{ synchronous: number }>`pragma synchronous`.execute(temp.store.db);
      expect(synchronous.rows[0]?.synchronous).toBe(2);
      await recordWebhookDelivery(temp.store.db, { guid: 'kept', event: 'x', hookId: null }, 1);
      const other = await openStore({ kind: 'sqlite', path: temp.path });
      expect(await recordWebhookDelivery(other.db, { guid: 'kept', event: 'x', hookId: null }, 2)).toBe(
        false,
      );
      await other.close();
    } finally {
      await temp.dispose();
    }
  });
});
