import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresNotifier, type Notifier } from '../../src/store/notifier.js';
import type { Database } from '../../src/store/schema.js';
import { eventually } from '../support/harness.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * Wake-ups between processes on PostgreSQL (store/notifier.ts): an API process that stores a burst
 * of events sends one `pg_notify` at a time, not one per event, and every wake-up asked for still
 * reaches the other processes after it was asked for.
 */
let database: TestDatabase;
let pool: pg.Pool;
let db: Kysely<Database>;
const notifiers: Notifier[] = [];
const notifies: string[] = [];

beforeEach(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
  db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.query.sql.includes('pg_notify')) notifies.push(event.query.sql);
    },
  });
  notifies.length = 0;
});

afterEach(async () => {
  for (const notifier of notifiers.splice(0)) await notifier.close();
  await db.destroy();
  await database.drop();
});

function notifier(): Notifier {
  const created = createPostgresNotifier({ db, url: database.url, logger: pino({ level: 'silent' }) });
  notifiers.push(created);
  return created;
}

/** Another process's listener; counts the wake-ups it got on a channel. */
async function listener(channel: 'events' | 'deliveries'): Promise<{ count: () => number }> {
  let count = 0;
  const other = notifier();
  other.subscribe(channel, () => count++);
  // Listening once its first (reconnect) wake-up arrived.
  await eventually(async () => (count > 0 ? true : undefined), 10_000);
  count = 0;
  return { count: () => count };
}

describe('wake-ups on PostgreSQL', () => {
  it('sends a burst of wake-ups as one pg_notify in flight and one after it, and each reaches the listener', async () => {
    const woken = await listener('events');
    const api = notifier();
    for (let i = 0; i < 50; i++) api.notify('events');
    await eventually(async () => (woken.count() >= 2 ? true : undefined), 10_000);
    // The first call's, then one for the 49 that came while it was under way.
    expect(notifies).toHaveLength(2);

    // Later, alone: a wake-up of its own.
    api.notify('events');
    await eventually(async () => (woken.count() >= 3 ? true : undefined), 10_000);
    expect(notifies).toHaveLength(3);
  });

  it('keeps the channels apart', async () => {
    const events = await listener('events');
    const deliveries = await listener('deliveries');
    const worker = notifier();
    worker.notify('deliveries');
    worker.notify('events');
    await eventually(async () => (events.count() >= 1 && deliveries.count() >= 1 ? true : undefined), 10_000);
    // Each channel's first wake-up goes at once: a wake-up on one never waits for the other's.
    expect(notifies).toHaveLength(2);
    expect(events.count()).toBe(1);
    expect(deliveries.count()).toBe(1);
  });
});
