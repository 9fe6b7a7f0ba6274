import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../store/store.js';

/** A migrated SQLite store in a fresh temporary directory; `dispose` closes and deletes it. */
export async function openTempStore(): Promise<{ store: Store; path: string; dispose(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'zekt-store-'));
  const path = join(dir, 'zekt.db');
  const store = await openStore({ kind: 'sqlite', path });
  await store.migrate();
  return {
    store,
    path,
    async dispose() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
