import { openTempStore } from '../test-support/temp-store.js';
import { TEST_STORE } from '../test-support/test-database.js';
import { describeStoreContract } from './store.contract.js';

// Runs on SQLite in the `sqlite` project and on PostgreSQL in the `postgres` project (vitest.config.ts).
describeStoreContract(TEST_STORE, openTempStore);
