import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * Usage counters per day instead of per month, so the console can chart them; a month is the sum of
 * its days. Counter names become camelCase, as the API answers them. Counts from before
 * this migration were kept per month only: they are carried over on the first day of their month.
 */
const RENAMED: Record<string, string> = {
  events_received: 'eventsReceived',
  events_blocked: 'eventsBlocked',
  messages_received: 'messagesReceived',
  messages_orphaned: 'messagesOrphaned',
  dispatch_api_calls: 'dispatchApiCalls',
  webhook_deliveries_received: 'webhookDeliveriesReceived',
  confirm_calls: 'confirmCalls',
  complete_calls: 'completeCalls',
};

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('usage_daily')
    .addColumn('account_id', bigint, (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('counter', 'text', (c) => c.notNull())
    .addColumn('value', bigint, (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('usage_daily_pk', ['account_id', 'day', 'counter'])
    .execute();
  const cases = Object.entries(RENAMED)
    .map(([from, to]) => `when '${from}' then '${to}'`)
    .join(' ');
  await sql
    .raw(
      `insert into usage_daily (account_id, day, counter, value)
       select account_id, month || '-01', case counter ${cases} else counter end, value from usage_counters`,
    )
    .execute(db);
  await db.schema.dropTable('usage_counters').execute();
}
