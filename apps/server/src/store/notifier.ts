import { EventEmitter } from 'node:events';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { coalesced } from './engine/coalesced.js';
import type { Database } from './schema.js';

/**
 * Wake-ups for the background workers: "an event became due", "a delivery became due". They are
 * hints — the work itself is always found in the store — so a lost notification costs one poll
 * interval, never an event. On PostgreSQL they cross processes with LISTEN/NOTIFY, so an API process
 * that stored an event wakes the worker processes at once.
 */
export type WakeChannel = 'events' | 'deliveries';

export interface Notifier {
  notify(channel: WakeChannel): void;
  subscribe(channel: WakeChannel, listener: () => void): void;
  close(): Promise<void>;
}

/** One process (SQLite): an in-memory emitter. */
export function createLocalNotifier(): Notifier {
  const emitter = new EventEmitter();
  return {
    notify: (channel) => emitter.emit(channel),
    subscribe: (channel, listener) => {
      emitter.on(channel, listener);
    },
    close: async () => {
      emitter.removeAllListeners();
    },
  };
}

const PG_CHANNELS: Record<WakeChannel, string> = { events: 'zekt_events', deliveries: 'zekt_deliveries' };

/**
 * Several processes on PostgreSQL. `notify` wakes this process directly and others through
 * `pg_notify`; a dedicated connection LISTENs and reconnects by itself after a database outage
 * (waking every worker then, since notifications sent meanwhile are gone).
 */
export function createPostgresNotifier(options: {
  db: Kysely<Database>;
  url: string;
  logger: Logger;
}): Notifier {
  const local = createLocalNotifier();
  let client: pg.Client | null = null;
  let closed = false;
  let retryTimer: NodeJS.Timeout | null = null;
  let failures = 0;
  let subscribed = false;

  async function listen(): Promise<void> {
    if (closed) return;
    const next = new pg.Client({ connectionString: options.url, application_name: 'zekt-listener' });
    next.on('notification', (message) => {
      const channel = (Object.keys(PG_CHANNELS) as WakeChannel[]).find(
        (c) => PG_CHANNELS[c] === message.channel,
      );
      if (channel) local.notify(channel);
    });
    next.on('error', () => reconnect(next));
    next.on('end', () => reconnect(next));
    try {
      await next.connect();
      for (const channel of Object.values(PG_CHANNELS)) await next.query(`LISTEN ${channel}`);
      if (closed) {
        await next.end();
        return;
      }
      client = next;
      if (failures > 0) options.logger.info('listening for wake-ups again');
      failures = 0;
      // Anything that arrived while we were not listening is in the store: look now.
      local.notify('events');
      local.notify('deliveries');
    } catch (error) {
      reconnect(next, error);
    }
  }

  function reconnect(broken: pg.Client, error?: unknown): void {
    if (closed || retryTimer) return;
    if (client === broken) client = null;
    broken.removeAllListeners();
    broken.on('error', () => undefined);
    broken.end().catch(() => undefined);
    failures++;
    if (failures === 1) options.logger.warn({ err: error }, 'lost the wake-up listener; reconnecting');
    retryTimer = setTimeout(
      () => {
        retryTimer = null;
        void listen();
      },
      Math.min(10_000, 200 * 2 ** Math.min(failures, 6)),
    );
  }

  // One pg_notify per channel in flight, not one per caller: every webhook an API process stores
  // asks for a wake-up, and under load those were a round trip and a statement each (two thirds
  // of the API role's writes to PostgreSQL in `zekt bench`). A wake-up asked for while one is
  // under way is sent once more after it, so it still reaches the listeners after the caller's
  // commit.
  const announce = Object.fromEntries(
    (Object.keys(PG_CHANNELS) as WakeChannel[]).map((channel) => [
      channel,
      coalesced(async () => {
        await sql`select pg_notify(${PG_CHANNELS[channel]}, '')`.execute(options.db);
      }),
    ]),
  ) as Record<WakeChannel, () => Promise<void>>;

  return {
    notify(channel) {
      local.notify(channel);
      announce[channel]().catch(() => undefined);
    },
    subscribe(channel, listener) {
      local.subscribe(channel, listener);
      if (!subscribed) {
        subscribed = true;
        void listen();
      }
    },
    async close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      const current = client;
      client = null;
      if (current) {
        current.removeAllListeners();
        current.on('error', () => undefined);
        await current.end().catch(() => undefined);
      }
      await local.close();
    },
  };
}
