import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { expiryCutoff, RETENTION_MS } from '../domain/retention.js';
import { type Metrics, noMetrics, type RetentionTable } from '../metrics/metrics.js';
import { deleteOldWindows } from '../store/rate-limit-counters.js';
import { deleteOldReplayRequests } from '../store/replays.js';
import {
  deleteExpiredArchives,
  deleteExpiredDeliveries,
  deleteExpiredEvents,
  deleteExpiredSessions,
  deleteOldAuditEntries,
  deleteOldSchemaViolations,
  deleteOldWebhookDeliveries,
  deleteOrphanedMessages,
  deleteRoutedMessages,
} from '../store/retention.js';
import type { Store } from '../store/store.js';
import { countUsage } from '../store/usage.js';

/**
 * The retention sweeper: removes what has expired, a small batch per transaction, and
 * counts orphaned messages on their account. Time comes from the injected clock, so tests move it.
 */
export interface SweepReport {
  deliveries: number;
  events: number;
  archives: number;
  orphanedMessages: number;
  routedMessages: number;
  webhookDeliveries: number;
  sessions: number;
  replayRequests: number;
  rateLimitCounters: number;
  auditEntries: number;
  schemaViolations: number;
}

export interface RetentionSweeper {
  sweep(): Promise<SweepReport>;
}

export function createRetentionSweeper(options: {
  store: Store;
  clock: Clock;
  logger: Logger;
  batchSize?: number;
  metrics?: Pick<Metrics, 'retentionDeleted'>;
}): RetentionSweeper {
  const { store, clock } = options;
  const batch = options.batchSize ?? 500;

  /** Repeats a one-batch delete, each in its own transaction, until a batch comes back short. */
  async function drain(deleteBatch: (trx: Store['db']) => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await store.transaction(deleteBatch);
      total += deleted;
      if (deleted < batch) return total;
    }
  }

  return {
    async sweep() {
      const now = clock.now();
      const report: SweepReport = {
        deliveries: await drain((trx) =>
          deleteExpiredDeliveries(trx, expiryCutoff(now, RETENTION_MS.deliveries), batch),
        ),
        events: await drain((trx) =>
          deleteExpiredEvents(trx, expiryCutoff(now, RETENTION_MS.deliveries), batch),
        ),
        archives: await drain((trx) => deleteExpiredArchives(trx, now, batch)),
        orphanedMessages: await drain(async (trx) => {
          const perAccount = await deleteOrphanedMessages(
            trx,
            expiryCutoff(now, RETENTION_MS.orphanedMessages),
            batch,
          );
          let deleted = 0;
          for (const [accountId, count] of perAccount) {
            await countUsage(trx, accountId, 'messagesOrphaned', now, count);
            deleted += count;
          }
          return deleted;
        }),
        routedMessages: await drain((trx) =>
          deleteRoutedMessages(trx, expiryCutoff(now, RETENTION_MS.archives), batch),
        ),
        webhookDeliveries: await drain((trx) =>
          deleteOldWebhookDeliveries(trx, expiryCutoff(now, RETENTION_MS.webhookDeliveries), batch),
        ),
        sessions: await drain((trx) => deleteExpiredSessions(trx, now, batch)),
        replayRequests: await drain((trx) =>
          deleteOldReplayRequests(trx, expiryCutoff(now, RETENTION_MS.replayRequests), batch),
        ),
        rateLimitCounters: await drain((trx) =>
          deleteOldWindows(trx, expiryCutoff(now, RETENTION_MS.rateLimitWindows), batch),
        ),
        auditEntries: await drain((trx) =>
          deleteOldAuditEntries(trx, expiryCutoff(now, RETENTION_MS.auditEntries), batch),
        ),
        schemaViolations: await drain((trx) =>
          deleteOldSchemaViolations(trx, expiryCutoff(now, RETENTION_MS.deliveries), batch),
        ),
      };
      const metrics = options.metrics ?? noMetrics;
      for (const [key, rows] of Object.entries(report) as Array<[keyof SweepReport, number]>) {
        metrics.retentionDeleted(TABLE_OF[key], rows);
      }
      if (Object.values(report).some((n) => n > 0))
        options.logger.info(report, 'retention sweep removed expired rows');
      return report;
    },
  };
}

/** The table each part of the sweep deletes from (the metric's label). */
const TABLE_OF: Record<keyof SweepReport, RetentionTable> = {
  deliveries: 'deliveries',
  events: 'events',
  archives: 'archives',
  orphanedMessages: 'messages',
  routedMessages: 'messages',
  webhookDeliveries: 'webhook_deliveries',
  sessions: 'sessions',
  replayRequests: 'replay_requests',
  rateLimitCounters: 'rate_limit_counters',
  auditEntries: 'audit_entries',
  schemaViolations: 'schema_violations',
};
