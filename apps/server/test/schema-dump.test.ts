import { describe, expect, it } from 'vitest';
import { dumpSchema } from './support/schema-dump.js';
import { openTempStore } from './support/temp-store.js';
import { TEST_STORE } from './support/test-database.js';

// The committed dump shows in review what a migration changes, and fails here when the migrations
// and the dump disagree. After adding a migration, refresh both dumps:
//   npx vitest run --project integration apps/server/test/schema-dump.test.ts -u
//   npx vitest run --project postgres apps/server/test/schema-dump.test.ts -u
describe(`the ${TEST_STORE} schema`, () => {
  it(`is the committed apps/server/src/store/schema/${TEST_STORE}.sql (refresh with -u, see above)`, async () => {
    // From scratch, not from the test template: this is the test of what the migrations build.
    const { store, dispose } = await openTempStore({ fromScratch: true });
    try {
      await expect(await dumpSchema(store)).toMatchFileSnapshot(`../src/store/schema/${TEST_STORE}.sql`);
    } finally {
      await dispose();
    }
  });
});
