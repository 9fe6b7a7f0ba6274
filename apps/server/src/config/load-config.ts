import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseTracingConfig, type TracingConfig } from '../tracing/tracing-config.js';
import { ConfigError, type Environment } from './config-error.js';
import { crossFieldProblems } from './cross-field-rules.js';
import { readSettings, trimmedValue } from './read-settings.js';
import { APP_SETTING_NAMES, type SettingValues, STORE_SETTING_NAMES } from './settings.js';

/**
 * `loadConfig` takes the environment as a parameter (tests pass their own), reads every setting of
 * the table (settings.ts), applies the rules relating them (cross-field-rules.ts), and reports
 * every problem together, each naming the variable to set. `Config` is what it builds.
 */
export type Config = ReturnType<typeof configFrom>;
export type Mode = Config['mode'];
/** What one request may cost the server (bodies, time, nesting). */
export type HttpLimits = Config['http'];
/** Per-client and per-account limits. Rates are per minute. */
export type AccountLimits = Config['limits'];
/** A GitHub App's credentials as the environment gives them. */
export type AppSettings = NonNullable<Config['github']['app']>;

export interface LoadConfigOptions {
  /** Reads GITHUB_PRIVATE_KEY_PATH; injected for tests. */
  readFile?: (path: string) => string;
  cwd?: string;
}

/**
 * @example loadConfig(process.env) // throws ConfigError listing every missing or invalid variable
 */
export function loadConfig(env: Environment, options: LoadConfigOptions = {}): Config {
  const readFile = options.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  const cwd = options.cwd ?? process.cwd();
  const { values, given, problems } = readSettings(env);

  let privateKey = values.GITHUB_PRIVATE_KEY;
  const keyPath = values.GITHUB_PRIVATE_KEY_PATH;
  if (privateKey === null && keyPath !== null) {
    try {
      privateKey = readFile(resolve(cwd, keyPath));
    } catch (error) {
      problems.push(`GITHUB_PRIVATE_KEY_PATH ${keyPath} cannot be read: ${(error as Error).message}`);
    }
  }
  problems.push(...crossFieldProblems(values, given, privateKey));
  const tracing = parseTracingConfig((name) => trimmedValue(env, name), problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return configFrom(values, {
    database: storeFrom(values, cwd),
    app: APP_SETTING_NAMES.some(given) ? appFrom(values, privateKey ?? '') : null,
    tracing,
  });
}

/**
 * Only what commands that touch the store alone (`zekt migrate`, `zekt token create`) need, so
 * they run without the GitHub App's settings.
 */
export function loadStoreConfig(env: Environment, options: { cwd?: string } = {}): Config['database'] {
  const { values, problems } = readSettings(env, STORE_SETTING_NAMES);
  if (problems.length > 0) throw new ConfigError(problems);
  return storeFrom(values, options.cwd ?? process.cwd());
}

/** The shape the rest of the server reads, from the values read; the types follow the table. */
function configFrom(
  v: SettingValues,
  parts: {
    database: ReturnType<typeof storeFrom>;
    /**
     * The GitHub App as the environment sets it; null when none of its settings is set: then the
     * App registered through setup (in the store) is used, or Zekt runs in setup mode until one is
     * (`setup/app-credentials.ts` decides which).
     */
    app: ReturnType<typeof appFrom> | null;
    /** OpenTelemetry traces over OTLP/HTTP (the standard OTEL_* variables); null: off. */
    tracing: TracingConfig | null;
  },
) {
  const apiUrl = v.GITHUB_API_URL;
  return {
    mode: v.NODE_ENV,
    host: v.HOST,
    port: v.PORT,
    /** Public URL of this service: hook URLs and `payloadRef` links are built from it. */
    baseUrl: v.ZEKT_BASE_URL ?? `http://localhost:${v.PORT}`,
    database: parts.database,
    github: {
      app: parts.app,
      apiUrl,
      /** GitHub's web root, where the OAuth login pages are (`https://github.com` for github.com). */
      webUrl: v.GITHUB_URL ?? githubWebUrlFor(apiUrl),
    },
    oidc: {
      issuer: v.ZEKT_OIDC_ISSUER,
      audience: v.ZEKT_OIDC_AUDIENCE,
    },
    /** Key material for MACs and for encrypting hook secrets at rest. */
    secret: v.ZEKT_SECRET,
    installationDispatchRate: v.ZEKT_INSTALLATION_DISPATCH_RATE,
    messageGraceMs: v.ZEKT_MESSAGE_GRACE_MS,
    pollIntervalMs: v.ZEKT_POLL_INTERVAL_MS,
    /** Delays before each dispatch attempt of a durable delivery; the first is the initial dispatch. */
    retryScheduleMs: v.ZEKT_RETRY_SCHEDULE,
    /** Delays before each read of a consumer run Zekt follows; the last repeats (domain/run-following.ts). */
    runFollowScheduleMs: v.ZEKT_RUN_FOLLOW_SCHEDULE,
    dispatchTimeoutMs: v.ZEKT_DISPATCH_TIMEOUT_MS,
    /** GitHub calls one worker process has in flight at most. */
    dispatchConcurrency: v.ZEKT_DISPATCH_CONCURRENCY,
    /** Of those, at most this many for one consumer installation. */
    installationConcurrency: v.ZEKT_INSTALLATION_CONCURRENCY,
    /** How long a worker owns a claimed delivery; must outlast one dispatch call. */
    leaseMs: v.ZEKT_LEASE_MS,
    retentionIntervalMs: v.ZEKT_RETENTION_INTERVAL_MS,
    /** How often a worker looks for webhooks GitHub failed to deliver; 0: never (only `zekt reconcile`). */
    reconcileIntervalMs: v.ZEKT_RECONCILE_INTERVAL_MS,
    /** A durable delivery GitHub accepted with no sign of its workflow after this long is flagged not started. */
    notStartedAfterMs: v.ZEKT_NOT_STARTED_AFTER,
    /** Message schemas: the threads that check messages, and the bounds of one check (contracts/). */
    schemas: {
      threads: v.ZEKT_SCHEMA_THREADS,
      validationTimeoutMs: v.ZEKT_SCHEMA_VALIDATION_TIMEOUT_MS,
      // A 64 KB schema of 700 patterns compiles in ~0.6 s here; ten times that is a runaway.
      compileTimeoutMs: 10_000,
    },
    /** Operational alerts: where they are POSTed (null: only listed), signed with `secret` (`whsec_…`). */
    alerts: {
      url: v.ZEKT_ALERT_URL,
      secret: v.ZEKT_ALERT_SECRET,
      dedupWindowMs: v.ZEKT_ALERT_DEDUP_WINDOW_MS,
    },
    /** Names this process's delivery leases (default: random per process). */
    workerId: v.ZEKT_WORKER_ID,
    /** `/metrics` and the probe port every process serves (docs/operations.md, *Metrics*). */
    metrics: {
      /** Port every process serves `/metrics`, `/healthz` and `/readyz` on (0: any free port). */
      port: v.ZEKT_METRICS_PORT,
      /** Interface that port listens on: loopback unless the operator opens it. */
      host: v.ZEKT_METRICS_HOST,
      /** Serve `/metrics` on the API's public port too (requires `token`). */
      onApiPort: v.ZEKT_METRICS_ON_API_PORT,
      /** Bearer token `/metrics` requires; null: none (the metrics port is private by default). */
      token: v.ZEKT_METRICS_TOKEN,
    },
    logLevel: v.LOG_LEVEL,
    http: {
      /** Headers and body must arrive within this long. */
      requestTimeoutMs: v.ZEKT_REQUEST_TIMEOUT_MS,
      /** Request body bytes one route holds at once; beyond it, 503 + Retry-After. */
      bodyBytesInFlight: v.ZEKT_BODY_BYTES_IN_FLIGHT,
      /** Deepest nesting of arrays and objects accepted in any JSON Zekt parses. */
      maxJsonDepth: v.ZEKT_MAX_JSON_DEPTH,
      /** Fastify's `trustProxy`: whose X-Forwarded-For names the client (rate limits key on it). */
      trustProxy: v.ZEKT_TRUST_PROXY,
    },
    limits: {
      authFailuresPerMinute: v.ZEKT_AUTH_FAILURE_LIMIT,
      apiCallsPerMinute: v.ZEKT_API_CALL_LIMIT,
      servicesPerAccount: v.ZEKT_MAX_SERVICES_PER_ACCOUNT,
      workflowsPerAccount: v.ZEKT_MAX_WORKFLOWS_PER_ACCOUNT,
      pendingRequestsPerAccount: v.ZEKT_MAX_PENDING_REQUESTS_PER_ACCOUNT,
    },
    tracing: parts.tracing,
  };
}

function storeFrom(
  v: Pick<SettingValues, (typeof STORE_SETTING_NAMES)[number]>,
  cwd: string,
): { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; preparedStatements: boolean } {
  return v.DATABASE_URL === null
    ? { kind: 'sqlite', path: resolve(cwd, v.ZEKT_DATA_DIR, 'zekt.db') }
    : { kind: 'postgres', url: v.DATABASE_URL, preparedStatements: v.ZEKT_DATABASE_PREPARED_STATEMENTS };
}

function appFrom(v: SettingValues, privateKey: string) {
  return {
    appId: v.GITHUB_APP_ID ?? 0,
    privateKey,
    webhookSecret: v.GITHUB_WEBHOOK_SECRET ?? '',
    clientId: v.GITHUB_CLIENT_ID,
    clientSecret: v.GITHUB_CLIENT_SECRET,
  };
}

/**
 * GitHub's web root from its REST base URL: `api.github.com` → `github.com`; GitHub Enterprise
 * Server (and the simulator) serve REST under `<root>/api/v3`.
 */
export function githubWebUrlFor(apiUrl: string): string {
  const url = new URL(apiUrl);
  if (url.hostname === 'api.github.com') return 'https://github.com';
  if (url.hostname.startsWith('api.') && url.hostname.endsWith('.ghe.com')) {
    return `${url.protocol}//${url.hostname.slice('api.'.length)}`;
  }
  return `${url.origin}${url.pathname.replace(/\/api\/v3\/?$/, '').replace(/\/+$/, '')}`;
}
