import { openTempStore } from '../../test/support/temp-store.js';
import { TEST_STORE } from '../../test/support/test-database.js';
import { describeStoreContract } from './store.contract.js';

// Runs on SQLite in the `unit` project and on PostgreSQL in the `postgres` project (vitest.config.ts).
// Every store here runs the real migrations on an empty database (the other suites copy a migrated
// template), so the migrations themselves stay under test.
describeStoreContract(TEST_STORE, () => openTempStore({ fromScratch: true }));
