import type { Kysely, Migration, MigrationProvider } from 'kysely';
import type { MigrationContext } from '../engine/dialect.js';
import * as m0001 from './0001-initial.js';
import * as m0002 from './0002-console-sessions.js';
import * as m0003 from './0003-usage-per-day.js';
import * as m0004 from './0004-hardening.js';
import * as m0005 from './0005-not-started.js';
import * as m0006 from './0006-audit-and-recovery.js';
import * as m0007 from './0007-reconcile-and-alerts.js';
import * as m0008 from './0008-attempt-connection.js';
import * as m0009 from './0009-usage-shards.js';
import * as m0010 from './0010-webhook-receipts-per-hook.js';
import * as m0011 from './0011-recovery-turns-and-alert-errors.js';
import * as m0012 from './0012-app-setup.js';
import * as m0013 from './0013-token-expiry.js';
import * as m0014 from './0014-workflow-dispatch.js';
import * as m0015 from './0015-event-contracts.js';
import * as m0016 from './0016-trace-context.js';
import * as m0017 from './0017-lean-delivery-indexes.js';
import * as m0018 from './0018-recordset-rows.js';
import * as m0019 from './0019-run-message-read.js';

interface ZektMigration {
  // biome-ignore lint/suspicious/noExplicitAny: see 0001-initial.ts
  up(db: Kysely<any>, context: MigrationContext): Promise<void>;
}

/** Numbered migrations, applied in order. Append only. */
const MIGRATIONS: Record<string, ZektMigration> = {
  '0001-initial': m0001,
  '0002-console-sessions': m0002,
  '0003-usage-per-day': m0003,
  '0004-hardening': m0004,
  '0005-not-started': m0005,
  '0006-audit-and-recovery': m0006,
  '0007-reconcile-and-alerts': m0007,
  '0008-attempt-connection': m0008,
  '0009-usage-shards': m0009,
  '0010-webhook-receipts-per-hook': m0010,
  '0011-recovery-turns-and-alert-errors': m0011,
  '0012-app-setup': m0012,
  '0013-token-expiry': m0013,
  '0014-workflow-dispatch': m0014,
  '0015-event-contracts': m0015,
  '0016-trace-context': m0016,
  '0017-lean-delivery-indexes': m0017,
  '0018-recordset-rows': m0018,
  '0019-run-message-read': m0019,
};

/**
 * Migrations are imported statically (not read from a folder at run time) so the built server
 * and the tests run the same code, and a missing file fails the build instead of a deployment.
 */
export function createMigrationProvider(context: MigrationContext): MigrationProvider {
  return {
    async getMigrations(): Promise<Record<string, Migration>> {
      return Object.fromEntries(
        Object.entries(MIGRATIONS).map(([name, migration]) => [
          name,
          { up: (db) => migration.up(db, context) },
        ]),
      );
    },
  };
}
