import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteList, sqliteListRows } from '../src/store/engine/bound-lists.js';
import { hotQuery } from '../src/store/engine/compiled-query.js';
import type { Store } from '../src/store/store.js';
import { openTempStore } from './support/temp-store.js';
import { TEST_STORE } from './support/test-database.js';

// On SQLite in the `integration` project and on PostgreSQL in the `postgres` project (vitest.config.ts).
describe(`hotQuery on ${TEST_STORE}`, () => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ store, dispose } = await openTempStore());
  });
  afterAll(() => dispose());

  const insertGuid = hotQuery((db, p: { guid: string; event: string; hookId: number | null; now: number }) =>
    db
      .insertInto('webhook_deliveries')
      .values({ delivery_guid: p.guid, event: p.event, hook_id: p.hookId, received_at: p.now })
      .onConflict((oc) => oc.column('delivery_guid').doNothing()),
  );
  const selectGuids = hotQuery((db, p: { event: string; since: number }) =>
    db
      .selectFrom('webhook_deliveries')
      .select(['delivery_guid', 'hook_id', 'received_at'])
      .where('event', '=', p.event)
      .where('received_at', '>=', p.since)
      .where('delivery_guid', '<>', 'never')
      .orderBy('delivery_guid'),
  );

  it('binds each call’s values into the statement compiled once, constants kept', async () => {
    const first = await insertGuid.execute(store.db, {
      guid: 'g-1',
      event: 'workflow_run',
      hookId: 7,
      now: 1_000,
    });
    const second = await store.transaction((trx) =>
      insertGuid.execute(trx, { guid: 'g-2', event: 'workflow_run', hookId: null, now: 2_000 }),
    );
    const again = await insertGuid.execute(store.db, { guid: 'g-1', event: 'ping', hookId: 8, now: 3_000 });
    expect([first, second, again].map((r) => Number(r.numAffectedRows))).toEqual([1, 1, 0]);
    const { rows } = await selectGuids.execute(store.db, { event: 'workflow_run', since: 1_500 });
    expect(rows.map((r) => [r.delivery_guid, r.hook_id, Number(r.received_at)])).toEqual([
      ['g-2', null, 2_000],
    ]);
    const all = await selectGuids.execute(store.db, { event: 'workflow_run', since: 0 });
    expect(all.rows.map((r) => [r.delivery_guid, r.hook_id, Number(r.received_at)])).toEqual([
      ['g-1', 7, 1_000],
      ['g-2', null, 2_000],
    ]);
  });

  it('binds a list of any length as one value of one compiled statement', async () => {
    // As the claims bind their lists: an array on PostgreSQL, JSON read by json_each on SQLite.
    const guidsIn = hotQuery((db, p: { guids: unknown }) =>
      db
        .selectFrom('webhook_deliveries')
        .select('delivery_guid')
        .where(
          TEST_STORE === 'postgres'
            ? sql<boolean>`delivery_guid = any(cast(${p.guids} as text[]))`
            : sql<boolean>`delivery_guid in ${sqliteListRows(p.guids)}`,
        )
        .orderBy('delivery_guid'),
    );
    const bind = (guids: string[]) => ({ guids: TEST_STORE === 'postgres' ? guids : sqliteList(guids) });
    const read = async (guids: string[]) =>
      (await guidsIn.execute(store.db, bind(guids))).rows.map((r) => r.delivery_guid);
    expect(await read(['g-2'])).toEqual(['g-2']);
    expect(await read(['g-1', 'g-2', 'missing'])).toEqual(['g-1', 'g-2']);
    expect(await read([])).toEqual([]);
  });

  it('refuses a builder that does more with a parameter than bind it', async () => {
    const transformed = hotQuery((db, p: { event: string }) =>
      db.selectFrom('webhook_deliveries').selectAll().where('event', '=', p.event.toUpperCase()),
    );
    await expect(transformed.execute(store.db, { event: 'ping' })).rejects.toThrow(/not bound/);
    const unused = hotQuery((db, p: { event: string; since: number }) =>
      db.selectFrom('webhook_deliveries').selectAll().where('event', '=', p.event),
    );
    await expect(unused.execute(store.db, { event: 'ping', since: 1 })).rejects.toThrow(/since not bound/);
  });

  it('refuses an undefined value rather than bind what Kysely would have left out', async () => {
    await expect(
      insertGuid.execute(store.db, {
        guid: 'g-3',
        event: 'ping',
        hookId: undefined as unknown as null,
        now: 1,
      }),
    ).rejects.toThrow(/hookId is undefined/);
  });
});
