import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import {
  ALERT_SEND_FAILURES,
  type AlertSendFailure,
  alertDedupKey,
  alertSendFailure,
  healthAlertKind,
  nextAlertAttemptAt,
} from '../domain/alerts.js';
import type { Clock } from '../domain/clock.js';
import { connectionHealth, type Health } from '../domain/health.js';
import { newId } from '../domain/ids.js';
import { signedHeaders } from '../security/standard-webhooks.js';
import {
  claimDueAlerts,
  getHealthStates,
  nextAlertDueAt,
  raiseAlert,
  recordAlertSend,
  setHealthState,
} from '../store/alerts.js';
import { connectionStats } from '../store/connection-stats.js';
import type { Database } from '../store/schema.js';
import type { Store } from '../store/store.js';
import { healthAlert, type RaiseInput } from './alert-payloads.js';

export type { RaiseInput };

/**
 * Operational alerts: raised into the outbox (deduplicated over a window), sent as
 * signed JSON to ZEKT_ALERT_URL with the Standard Webhooks headers, retried on their own schedule,
 * and listed in the console. Without a URL they are only listed.
 */
export interface AlertSettings {
  /** Where alerts are POSTed; null: only recorded. */
  url: string | null;
  /** The `whsec_…` key, decoded. */
  key: Buffer | null;
  dedupWindowMs: number;
}

export interface AlertService {
  /**
   * Records an alert unless an alike one was raised within the window; true when recorded. Give
   * the transaction that made the change the alert is about (`db`), so the alert commits with it:
   * a process that dies right after that commit must not lose the alert.
   */
  raise(input: RaiseInput, db?: Kysely<Database>): Promise<boolean>;
  /** Compares every connection's health with the last seen and raises what changed; returns how many. */
  checkHealth(): Promise<number>;
  /** Sends the alerts that are due; returns how many sends were made. */
  sendDue(): Promise<number>;
  nextDueAt(): Promise<number | null>;
}

const SEND_TIMEOUT_MS = 10_000;
const LEASE_MS = 60_000;
const BATCH = 20;

export function createAlertService(options: {
  store: Store;
  clock: Clock;
  logger: Logger;
  settings: AlertSettings;
  /** Names this process in the alerts' leases. */
  owner: string;
}): AlertService {
  const { store, clock, logger, settings } = options;

  async function raise(input: RaiseInput, db: Kysely<Database> = store.db): Promise<boolean> {
    const now = clock.now();
    const alertId = newId('alrt', now);
    const payload = JSON.stringify({
      type: input.kind,
      timestamp: new Date(now).toISOString(),
      data: { alertId, ...input.data },
    });
    const raised = await raiseAlert(
      db,
      {
        alert_id: alertId,
        account_id: input.accountId,
        kind: input.kind,
        dedup_key: alertDedupKey(input.kind, input.subject),
        payload,
        status: settings.url === null ? 'unsent' : 'pending',
      },
      now - settings.dedupWindowMs,
      now,
    );
    if (raised) logger.info({ alertId, kind: input.kind, subject: input.subject }, `alert ${input.kind}`);
    return raised;
  }

  async function send(row: { alert_id: string; payload: string; attempts: number }): Promise<void> {
    const now = clock.now();
    let failure: AlertSendFailure | null;
    let details: Record<string, unknown>;
    try {
      const headers = settings.key
        ? signedHeaders(settings.key, row.alert_id, Math.floor(now / 1000), row.payload)
        : {};
      const response = await fetch(settings.url ?? '', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'zekt-alerts', ...headers },
        body: row.payload,
        redirect: 'manual',
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      });
      await response.body?.cancel();
      failure = alertSendFailure(response.status);
      details = { status: response.status };
    } catch (cause) {
      failure = (cause as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable';
      details = { error: withoutAddress(describeError(cause), settings.url) };
    }
    const at = clock.now();
    if (failure === null) {
      await recordAlertSend(store.db, row.alert_id, { ok: true }, at);
      return;
    }
    const retryAt = nextAlertAttemptAt(row.attempts + 1, at);
    await recordAlertSend(store.db, row.alert_id, { ok: false, error: failure, retryAt }, at);
    logger.warn(
      { alertId: row.alert_id, retryAt, category: failure, ...details },
      `alert not sent: ${ALERT_SEND_FAILURES[failure]} (ZEKT_ALERT_URL)`,
    );
  }

  return {
    raise,

    async checkHealth() {
      const now = clock.now();
      const connections = await store.db
        .selectFrom('subscriptions')
        .innerJoin('services', 'services.service_id', 'subscriptions.service_id')
        .innerJoin('repositories as provider', 'provider.repository_id', 'services.repository_id')
        .innerJoin(
          'repositories as consumer',
          'consumer.repository_id',
          'subscriptions.consumer_repository_id',
        )
        .select([
          'subscriptions.subscription_id',
          'subscriptions.consumer_account_id',
          'services.slug',
          'provider.full_name as provider_repository',
          'consumer.full_name as consumer_repository',
        ])
        .where('subscriptions.status', '=', 'approved')
        .execute();
      const stats = await connectionStats(
        store.db,
        connections.map((c) => c.subscription_id),
        now,
      );
      const previous = await getHealthStates(store.db);
      let raised = 0;
      for (const connection of connections) {
        const s = stats.get(connection.subscription_id);
        const report = connectionHealth({
          total: s?.total24h ?? 0,
          succeeded: s?.succeeded24h ?? 0,
          lastEventAt: s?.lastEventAt ?? null,
          now,
        });
        const before = (previous.get(connection.subscription_id) as Health | undefined) ?? null;
        if (before === report.health) continue;
        const kind = healthAlertKind(before, report.health);
        // The new health and its alert commit together: a crash between them would leave the
        // change seen and its alert never raised.
        const done = await store.transaction(async (trx) => {
          await setHealthState(trx, connection.subscription_id, report.health, now);
          if (kind === null) return false;
          return raise(healthAlert(connection, kind, report, before), trx);
        });
        if (done) raised++;
      }
      return raised;
    },

    async sendDue() {
      if (settings.url === null) return 0;
      const claimed = await claimDueAlerts(
        store.db,
        { owner: options.owner, leaseMs: LEASE_MS, limit: BATCH },
        clock.now(),
      );
      await Promise.all(claimed.map(send));
      return claimed.length;
    },

    nextDueAt: () => (settings.url === null ? Promise.resolve(null) : nextAlertDueAt(store.db)),
  };
}

/** An error and its causes, one message after the other (fetch's own says only "fetch failed"). */
function describeError(error: unknown): string {
  const parts: string[] = [];
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 4; at = at.cause, depth++) {
    const code = (at as { code?: unknown }).code;
    parts.push(typeof code === 'string' ? `${at.message} (${code})` : at.message);
  }
  return parts.join(': ');
}

/**
 * The error without the receiver's address: the operator's log keeps what went wrong, never a
 * secret the URL carries (a token in its path or query, or credentials before its host).
 */
function withoutAddress(message: string, url: string | null): string {
  const bare = url === null ? message : message.split(url).join('<ZEKT_ALERT_URL>');
  return bare.replace(/\/\/[^/\s@]*@/g, '//<credentials>@');
}
