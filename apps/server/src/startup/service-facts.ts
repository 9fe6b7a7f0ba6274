import { sql } from 'kysely';
import type { Config } from '../config.js';
import type {
  AppAnswer,
  InstallationFact,
  ServiceFacts,
  WebhookDeliveryFact,
} from '../domain/service-checks.js';
import { appVerdict } from '../domain/service-checks.js';
import { type AppProbe, createAppProbe } from '../github/app-probe.js';
import { probeUrl } from '../http-probe.js';
import { redactUrl } from '../redact-url.js';
import { pendingMigrations } from '../store/migration-status.js';
import type { Store } from '../store/store.js';
import { isStoreUnavailable } from '../store/store-errors.js';
import type { AppCredentials } from './app-credentials.js';
import { explainDatabaseFailure, postgresTarget } from './database-problems.js';
import { openExistingStore } from './existing-store.js';
import { OperatorError } from './operator-error.js';

/**
 * Gathers what the checks judge (domain/service-checks.ts): the configuration's problems, the
 * database, GitHub's answers to the App (`GET /app`, its webhook's deliveries, its installations),
 * the OIDC issuer's discovery document and keys, and whether the alert URL answers. Only reads:
 * nothing is migrated, created or sent.
 */
export interface ServiceFactsInput {
  /** What `loadConfig` refused; when any, the checks that need the configuration are skipped. */
  configurationProblems: string[];
  /** The store's settings; null when they are invalid themselves. */
  database: Config['database'] | null;
  /** The running server's store; without it, the existing store is opened and closed again. */
  store?: Store;
  /** Null when the configuration is invalid. */
  github: { apiUrl: string; credentials: AppCredentials | null; setupUrl: string } | null;
  webhookUrl: string;
  oidcIssuer: string | null;
  alertUrl: string | null;
  now?: () => number;
  timeoutMs?: number;
}

export async function gatherServiceFacts(input: ServiceFactsInput): Promise<ServiceFacts> {
  const now = input.now ?? Date.now;
  const configured = input.configurationProblems.length === 0;
  const skippedForConfiguration = { kind: 'skipped' as const };
  const [store, github, oidc, alerts] = await Promise.all([
    readStore(input),
    configured && input.github ? askGitHub(input.github, input, now) : null,
    configured && input.oidcIssuer ? probeOidc(input.oidcIssuer, input.timeoutMs) : skippedForConfiguration,
    !configured
      ? skippedForConfiguration
      : input.alertUrl === null
        ? { kind: 'unset' as const }
        : probeAlertUrl(input.alertUrl, input.timeoutMs),
  ]);
  return {
    checkedAt: now(),
    configuration: { problems: input.configurationProblems },
    database: store.fact,
    app:
      github?.app ??
      ({ kind: 'skipped', reason: 'needs a valid configuration' } satisfies ServiceFacts['app']),
    webhooks: github?.webhooks ?? { kind: 'skipped' },
    installations:
      github?.installations.kind === 'listed'
        ? { ...github.installations, knownToZekt: store.installations }
        : (github?.installations ?? { kind: 'skipped' }),
    oidc,
    alerts,
    webhookUrl: input.webhookUrl,
  };
}

async function readStore(
  input: ServiceFactsInput,
): Promise<{ fact: ServiceFacts['database']; installations: InstallationFact[] | null }> {
  const database = input.database;
  if (database === null) {
    return { fact: { kind: 'skipped', reason: 'needs valid DATABASE_URL settings' }, installations: null };
  }
  let store: Store | undefined = input.store;
  try {
    store ??= await openExistingStore(database);
    await sql`select 1`.execute(store.db);
    const pending = await pendingMigrations(store);
    if (pending.length > 0 && database.kind === 'postgres' && !(await mayCreateTables(store))) {
      // `zekt migrate` would fail the same way: say so now rather than send the operator there.
      const refused = explainDatabaseFailure(
        { code: '42501', message: 'permission denied for schema public' },
        database,
      );
      if (refused) {
        return { fact: { kind: 'failed', summary: refused.summary, fix: refused.fix }, installations: null };
      }
    }
    const installations = pending.length === 0 ? await installedAccounts(store) : null;
    return {
      fact: { kind: 'reached', description: describeDatabase(database), pendingMigrations: pending },
      installations,
    };
  } catch (error) {
    const explained = error instanceof OperatorError ? error : explainDatabaseFailure(error, database);
    if (explained) {
      return {
        fact: { kind: 'failed', summary: explained.summary, fix: explained.fix },
        installations: null,
      };
    }
    const where = describeDatabase(database);
    return {
      fact: {
        kind: 'failed',
        summary: `cannot reach ${where}: ${(error as Error).message}`,
        fix: isStoreUnavailable(error)
          ? database.kind === 'postgres'
            ? 'start PostgreSQL, or correct the host and port of DATABASE_URL'
            : 'check ZEKT_DATA_DIR'
          : 'see the message; zekt migrate shows the same error with its cause',
      },
      installations: null,
    };
  } finally {
    if (store !== undefined && store !== input.store) await store.close().catch(() => undefined);
  }
}

async function mayCreateTables(store: Store): Promise<boolean> {
  const { rows } = await sql<{
    allowed: boolean;
  }>`select has_schema_privilege('public', 'CREATE') as allowed`.execute(store.db);
  return rows[0]?.allowed === true;
}

function describeDatabase(database: Config['database']): string {
  if (database.kind === 'sqlite') return `the embedded store ${database.path}`;
  try {
    const target = postgresTarget(database.url);
    return `PostgreSQL database "${target.database}" on ${target.host}:${target.port}`;
  } catch {
    return `PostgreSQL at ${redactUrl(database.url)}`;
  }
}

async function installedAccounts(store: Store): Promise<InstallationFact[]> {
  const rows = await store.db
    .selectFrom('accounts')
    .select(['login', 'installation_id'])
    .where('installation_id', 'is not', null)
    .where('uninstalled_at', 'is', null)
    .execute();
  return rows.map((row) => ({ installationId: Number(row.installation_id), login: row.login }));
}

async function askGitHub(
  github: NonNullable<ServiceFactsInput['github']>,
  input: ServiceFactsInput,
  now: () => number,
): Promise<Pick<ServiceFacts, 'app' | 'webhooks' | 'installations'>> {
  const credentials = github.credentials;
  if (credentials === null) {
    return {
      app: { kind: 'setup_required', setupUrl: github.setupUrl },
      webhooks: { kind: 'skipped' },
      installations: { kind: 'skipped' },
    };
  }
  const probe = createAppProbe({
    apiUrl: github.apiUrl,
    appId: credentials.appId,
    privateKey: credentials.privateKey,
    now,
    ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
  });
  const answer = await probe.get('/app');
  const app: ServiceFacts['app'] = {
    kind: 'asked',
    appId: credentials.appId,
    source: credentials.source,
    apiUrl: github.apiUrl,
    answer: withoutExtras(answer),
    skewMs: answer.skewMs ?? null,
  };
  if (appVerdict(answer) !== 'accepted') {
    return { app, webhooks: { kind: 'skipped' }, installations: { kind: 'skipped' } };
  }
  const htmlUrl = (answer.kind === 'answered' ? (answer.body as { html_url?: unknown }) : null)?.html_url;
  const [webhooks, installations] = await Promise.all([
    listDeliveries(probe),
    listInstallations(probe, typeof htmlUrl === 'string' ? `${htmlUrl}/installations/new` : null),
  ]);
  return { app, webhooks, installations };
}

function withoutExtras(answer: AppAnswer & { skewMs?: unknown; next?: unknown }): AppAnswer {
  if (answer.kind !== 'answered') return answer;
  return { kind: 'answered', status: answer.status, body: answer.body };
}

/** The newest page of the App webhook's deliveries (GitHub keeps 3 days of them). */
async function listDeliveries(probe: AppProbe): Promise<ServiceFacts['webhooks']> {
  const answer = await probe.get('/app/hook/deliveries?per_page=100');
  if (answer.kind !== 'answered' || answer.status !== 200 || !Array.isArray(answer.body)) {
    return { kind: 'failed', answer: withoutExtras(answer) };
  }
  const deliveries = (answer.body as Array<Record<string, unknown>>).map(
    (d): WebhookDeliveryFact => ({
      id: Number(d.id),
      deliveredAt: String(d.delivered_at),
      statusCode: Number(d.status_code),
      status: String(d.status),
      event: String(d.event),
      installationId: typeof d.installation_id === 'number' ? d.installation_id : null,
    }),
  );
  // The URL GitHub could not reach is on the delivery itself, not in the list.
  const newest = deliveries[0];
  let failedUrl: string | null = null;
  if (newest !== undefined && (newest.statusCode < 200 || newest.statusCode >= 300)) {
    const detail = await probe.get(`/app/hook/deliveries/${newest.id}`);
    const url = detail.kind === 'answered' ? (detail.body as { url?: unknown } | null)?.url : undefined;
    failedUrl = typeof url === 'string' && url !== '' ? url : null;
  }
  return { kind: 'listed', deliveries, failedUrl };
}

async function listInstallations(
  probe: AppProbe,
  installUrl: string | null,
): Promise<ServiceFacts['installations']> {
  const listed = await probe.getAll('/app/installations?per_page=100');
  if ('failed' in listed) return { kind: 'failed', answer: withoutExtras(listed.failed) };
  const onGitHub = (listed.items as Array<{ id?: unknown; account?: { login?: unknown } | null }>).map(
    (i): InstallationFact => ({
      installationId: Number(i.id),
      login: typeof i.account?.login === 'string' ? i.account.login : `installation ${String(i.id)}`,
    }),
  );
  return { kind: 'listed', onGitHub, knownToZekt: null, installUrl };
}

async function probeOidc(issuer: string, timeoutMs: number | undefined): Promise<ServiceFacts['oidc']> {
  const options = timeoutMs === undefined ? {} : { timeoutMs };
  const discovery = await probeUrl(`${issuer}/.well-known/openid-configuration`, options);
  const jwksUri =
    discovery.kind === 'answered' ? (discovery.body as { jwks_uri?: unknown } | null)?.jwks_uri : undefined;
  const jwks = typeof jwksUri === 'string' ? await probeUrl(jwksUri, options) : null;
  return { kind: 'probed', issuer, discovery, jwks };
}

/**
 * `HEAD` on the alert URL: it shows the receiver answers without sending it anything it would act
 * on (no body, no signature). Only the origin is shown: paths of alert URLs often hold a secret.
 */
async function probeAlertUrl(url: string, timeoutMs: number | undefined): Promise<ServiceFacts['alerts']> {
  const answer = await probeUrl(url, { method: 'HEAD', ...(timeoutMs === undefined ? {} : { timeoutMs }) });
  return { kind: 'probed', origin: new URL(url).origin, answer };
}
