import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';

/**
 * Webhook idempotency keyed on (GUID, hook). GitHub gives one event the same `X-GitHub-Delivery`
 * GUID on every hook that receives it, so a repository that is a provider and a completion-tracked
 * consumer gets each `workflow_run` on both of Zekt's hooks under one GUID; keyed on the GUID
 * alone, whichever came second was taken for a duplicate and lost.
 *
 * New tables rather than a new key on the old ones: migrations only add, so a process of the
 * previous version, still inserting with the GUID as its conflict target during a rolling upgrade,
 * keeps working (docs/operations.md, *Upgrading several processes*).
 *
 * - `webhook_receipts`: one row per (GUID, hook) processed: the hook Zekt placed whose secret
 *   signed it, or 0 for the App's webhook. `webhook_deliveries`, written before this migration
 *   and by a previous version during the upgrade, is still read, never written: one of its rows
 *   says the GUID was processed through the hook it names (`X-GitHub-Hook-ID`), and one without a
 *   hook id (the hook is unknown) counts for every hook — acting on a webhook twice is worse than
 *   the rare loss of one that arrived before the upgrade through a second hook; for the App's
 *   webhook, whose events reach no other hook, any row of the GUID counts. Its rows age out with
 *   retention (30 days).
 * - `webhook_redeliveries`: what the reconciler asked GitHub to redeliver, per (GUID, webhook),
 *   and how many times (it asks again, bounded, for a redelivery that failed again). The rows of
 *   `redelivery_requests` are copied in as asked once; that table is no longer read (a previous
 *   version's reconciler writing it during the upgrade at worst makes this one ask once more).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not as it is now.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('webhook_receipts')
    .addColumn('delivery_guid', 'text', (c) => c.notNull())
    .addColumn('hook_id', bigint, (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('received_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_receipts_pk', ['delivery_guid', 'hook_id'])
    .execute();
  await db.schema
    .createIndex('webhook_receipts_received')
    .on('webhook_receipts')
    .column('received_at')
    .execute();

  await db.schema
    .createTable('webhook_redeliveries')
    .addColumn('delivery_guid', 'text', (c) => c.notNull())
    /** `app`, or `repository:<hook id>`. */
    .addColumn('hook', 'text', (c) => c.notNull())
    .addColumn('github_delivery_id', bigint, (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('action', 'text')
    .addColumn('asks', 'integer', (c) => c.notNull())
    .addColumn('requested_at', bigint, (c) => c.notNull())
    .addColumn('asked_at', bigint, (c) => c.notNull())
    .addColumn('recovered_at', bigint)
    .addColumn('gave_up_at', bigint)
    .addPrimaryKeyConstraint('webhook_redeliveries_pk', ['delivery_guid', 'hook'])
    .execute();
  await db.schema
    .createIndex('webhook_redeliveries_requested')
    .on('webhook_redeliveries')
    .column('requested_at')
    .execute();
  await sql`insert into webhook_redeliveries
      (delivery_guid, hook, github_delivery_id, event, action, asks, requested_at, asked_at, recovered_at, gave_up_at)
      select delivery_guid, hook, github_delivery_id, event, action, 1, requested_at, requested_at, recovered_at, null
      from redelivery_requests`.execute(db);
}
