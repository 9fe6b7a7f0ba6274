import { afterEach, beforeEach } from 'vitest';
import { openStore, type Store } from '../../src/store/store.js';
import { createMigratedTestDatabase, type TestDatabase } from './test-database.js';

/** What a suite reads of the store `recordingPostgresStore` opens for each of its tests. */
export interface RecordingPostgresStore {
  readonly store: Store;
  /** The test database's URL, to open a second store on it. */
  readonly url: string;
  /** Every statement the store sent, in order; a test empties it before what it counts. */
  readonly statements: string[];
  /** Closes the store inside the test (what closing does is what it checks); not again afterwards. */
  closeNow(): Promise<void>;
}

/**
 * For suites that count the statements an operation costs on PostgreSQL: before each test a
 * migrated database of its own and a store on it that records every statement it sends; after the
 * test both are closed and dropped.
 */
export function recordingPostgresStore(): RecordingPostgresStore {
  let database: TestDatabase | undefined;
  let store: Store | undefined;
  const statements: string[] = [];
  beforeEach(async () => {
    statements.length = 0;
    database = await createMigratedTestDatabase();
    store = await openStore({
      kind: 'postgres',
      url: database.url,
      poolSize: 4,
      onQuery: (sql) => statements.push(sql),
    });
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
    await database?.drop();
  });
  return {
    get store() {
      if (!store) throw new Error('the store is open during a test only');
      return store;
    },
    get url() {
      if (!database) throw new Error('the database exists during a test only');
      return database.url;
    },
    statements,
    async closeNow() {
      const open = store;
      store = undefined;
      await open?.close();
    },
  };
}
