import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_ALERT_DEDUP_WINDOW_MS } from './domain/alerts.js';
import { DAY_MS, HOUR_MS, parseDurationMs } from './domain/duration.js';
import { DEFAULT_NOT_STARTED_AFTER_MS } from './domain/not-started.js';
import { DEFAULT_RETRY_SCHEDULE_MS } from './domain/retry-schedule.js';
import { DEFAULT_RUN_FOLLOW_SCHEDULE_MS } from './domain/run-following.js';
import { parseWebhookSecret } from './security/standard-webhooks.js';
import { parseTracingConfig, TRACING_SETTINGS, type TracingConfig } from './tracing/tracing-config.js';

/**
 * The only module that reads the environment. `loadConfig` takes the environment as a parameter
 * (tests pass their own), validates everything in one pass and reports every problem together,
 * each naming the variable to set. docs/configuration.md lists every setting.
 */
export type Mode = 'production' | 'development' | 'test';

export interface Config {
  mode: Mode;
  host: string;
  port: number;
  /** Public URL of this service: hook URLs and `payloadRef` links are built from it. */
  baseUrl: string;
  database: { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; preparedStatements: boolean };
  github: {
    /**
     * The GitHub App as the environment sets it; null when none of its settings is set: then the
     * App registered through setup (in the store) is used, or Zekt runs in setup mode until one is
     * (`setup/app-credentials.ts` decides which).
     */
    app: AppSettings | null;
    apiUrl: string;
    /** GitHub's web root, where the OAuth login pages are (`https://github.com` for github.com). */
    webUrl: string;
  };
  oidc: { issuer: string; audience: string };
  /** Key material for MACs and for encrypting hook secrets at rest. */
  secret: string;
  installationDispatchRate: number;
  messageGraceMs: number;
  pollIntervalMs: number;
  /** Delays before each dispatch attempt of a durable delivery; the first is the initial dispatch. */
  retryScheduleMs: number[];
  /** Delays before each read of a consumer run Zekt follows; the last repeats (domain/run-following.ts). */
  runFollowScheduleMs: number[];
  dispatchTimeoutMs: number;
  /** GitHub calls one worker process has in flight at most. */
  dispatchConcurrency: number;
  /** Of those, at most this many for one consumer installation. */
  installationConcurrency: number;
  /** How long a worker owns a claimed delivery; must outlast one dispatch call. */
  leaseMs: number;
  retentionIntervalMs: number;
  /** How often a worker looks for webhooks GitHub failed to deliver; 0: never (only `zekt reconcile`). */
  reconcileIntervalMs: number;
  /** A durable delivery GitHub accepted with no sign of its workflow after this long is flagged not started. */
  notStartedAfterMs: number;
  /** Message schemas: the threads that check messages, and the bounds of one check (contracts/). */
  schemas: { threads: number; validationTimeoutMs: number; compileTimeoutMs: number };
  /** Operational alerts: where they are POSTed (null: only listed), signed with `secret` (`whsec_…`). */
  alerts: { url: string | null; secret: string | null; dedupWindowMs: number };
  /** Names this process's delivery leases (default: random per process). */
  workerId: string | null;
  /** `/metrics` and the probe port every process serves (docs/operations.md, *Metrics*). */
  metrics: {
    /** Port every process serves `/metrics`, `/healthz` and `/readyz` on (0: any free port). */
    port: number;
    /** Interface that port listens on: loopback unless the operator opens it. */
    host: string;
    /** Serve `/metrics` on the API's public port too (requires `token`). */
    onApiPort: boolean;
    /** Bearer token `/metrics` requires; null: none (the metrics port is private by default). */
    token: string | null;
  };
  logLevel: string;
  http: HttpLimits;
  limits: AccountLimits;
  /** OpenTelemetry traces over OTLP/HTTP (the standard OTEL_* variables); null: off. */
  tracing: TracingConfig | null;
}

/** A GitHub App's credentials as the environment gives them. */
export interface AppSettings {
  appId: number;
  privateKey: string;
  webhookSecret: string;
  clientId: string | null;
  clientSecret: string | null;
}

/** What one request may cost the server (bodies, time, nesting). */
export interface HttpLimits {
  /** Headers and body must arrive within this long. */
  requestTimeoutMs: number;
  /** Request body bytes one route holds at once; beyond it, 503 + Retry-After. */
  bodyBytesInFlight: number;
  /** Deepest nesting of arrays and objects accepted in any JSON Zekt parses. */
  maxJsonDepth: number;
  /** Fastify's `trustProxy`: whose X-Forwarded-For names the client (rate limits key on it). */
  trustProxy: boolean | string[];
}

/** Per-client and per-account limits. Rates are per minute. */
export interface AccountLimits {
  authFailuresPerMinute: number;
  apiCallsPerMinute: number;
  servicesPerAccount: number;
  workflowsPerAccount: number;
  pendingRequestsPerAccount: number;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`Zekt cannot start; fix the configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export type Environment = Record<string, string | undefined>;

/** The process environment; the one place in the server that touches `process.env`. */
export function processEnvironment(): Environment {
  return process.env;
}

/**
 * Only what commands that touch the store alone (`zekt migrate`, `zekt token create`) need, so
 * they run without the GitHub App's settings.
 */
export function loadStoreConfig(env: Environment, options: { cwd?: string } = {}): Config['database'] {
  const cwd = options.cwd ?? process.cwd();
  const url = env.DATABASE_URL?.trim();
  if (url) {
    if (!/^postgres(ql)?:\/\//.test(url)) {
      throw new ConfigError([
        'DATABASE_URL must start with postgres:// or postgresql://; unset it to use the embedded SQLite store',
      ]);
    }
    const prepared = env.ZEKT_DATABASE_PREPARED_STATEMENTS?.trim();
    if (prepared !== undefined && prepared !== '' && prepared !== 'true' && prepared !== 'false') {
      throw new ConfigError([
        `ZEKT_DATABASE_PREPARED_STATEMENTS must be true or false (got ${JSON.stringify(prepared)}): false only behind a pooler that cannot keep prepared statements`,
      ]);
    }
    return { kind: 'postgres', url, preparedStatements: prepared !== 'false' };
  }
  return { kind: 'sqlite', path: resolve(cwd, env.ZEKT_DATA_DIR?.trim() || '.zekt', 'zekt.db') };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const MIN_SECRET_LENGTH = 32;

/** Every variable `zekt serve --help` lists, with what it does. */
export const SETTINGS: ReadonlyArray<{ name: string; description: string }> = [
  { name: 'PORT', description: 'HTTP port (default 3000)' },
  { name: 'HOST', description: 'interface to listen on (default 0.0.0.0)' },
  { name: 'ZEKT_BASE_URL', description: 'public URL of this service; required in production' },
  {
    name: 'DATABASE_URL',
    description: 'postgres://… to use PostgreSQL; unset for the embedded SQLite store',
  },
  {
    name: 'ZEKT_DATABASE_PREPARED_STATEMENTS',
    description:
      'PostgreSQL: prepare statements with names (default true); false behind a pooler that cannot keep them',
  },
  { name: 'ZEKT_DATA_DIR', description: 'directory of the embedded store (default ./.zekt)' },
  {
    name: 'GITHUB_APP_ID',
    description:
      "the GitHub App's id (unset, with the key and webhook secret: the App registered through setup, or setup mode)",
  },
  { name: 'GITHUB_PRIVATE_KEY', description: "the App's private key, PEM (or GITHUB_PRIVATE_KEY_PATH)" },
  { name: 'GITHUB_PRIVATE_KEY_PATH', description: "file holding the App's private key" },
  { name: 'GITHUB_WEBHOOK_SECRET', description: "the App's webhook secret (required with GITHUB_APP_ID)" },
  { name: 'GITHUB_CLIENT_ID', description: "the App's OAuth client id (console login)" },
  { name: 'GITHUB_CLIENT_SECRET', description: "the App's OAuth client secret (console login)" },
  { name: 'GITHUB_API_URL', description: 'GitHub REST base URL (default https://api.github.com)' },
  {
    name: 'GITHUB_URL',
    description:
      "GitHub's web root: the console login and registering the App from a manifest (default: from GITHUB_API_URL)",
  },
  {
    name: 'ZEKT_OIDC_ISSUER',
    description: 'Actions OIDC issuer (default https://token.actions.githubusercontent.com)',
  },
  { name: 'ZEKT_OIDC_AUDIENCE', description: 'audience the message action requests (default api://zekt)' },
  {
    name: 'ZEKT_SECRET',
    description: `at least ${MIN_SECRET_LENGTH} random characters: MAC and encryption key, the same in every process (required)`,
  },
  {
    name: 'ZEKT_INSTALLATION_DISPATCH_RATE',
    description: 'dispatches per minute per consumer installation (default 80, 0 = unpaced)',
  },
  {
    name: 'ZEKT_MESSAGE_GRACE_MS',
    description: 'how long a completed run waits for a late message (default 0)',
  },
  { name: 'ZEKT_POLL_INTERVAL_MS', description: 'safety-net poll of the store for due work (default 1000)' },
  {
    name: 'ZEKT_RETRY_SCHEDULE',
    description:
      'durable dispatch schedule, comma-separated durations (default 0s,10s,1m,5m,30m,2h,6h,12h,24h)',
  },
  {
    name: 'ZEKT_RUN_FOLLOW_SCHEDULE',
    description:
      'delays between reads of a consumer run Zekt follows (workflow_dispatch, durable, no COMPLETION), comma-separated durations, the last repeating (default 5s,10s,15s,20s,1m,2m,5m,15m)',
  },
  {
    name: 'ZEKT_DISPATCH_TIMEOUT_MS',
    description: 'timeout of one repository_dispatch call (default 10000)',
  },
  {
    name: 'ZEKT_DISPATCH_CONCURRENCY',
    description: 'repository_dispatch calls one worker has in flight at most (default 64)',
  },
  {
    name: 'ZEKT_INSTALLATION_CONCURRENCY',
    description: 'of those, calls to one consumer installation at most (default 8)',
  },
  {
    name: 'ZEKT_LEASE_MS',
    description: 'how long a worker owns a claimed delivery (default 60000, > the timeout)',
  },
  {
    name: 'ZEKT_WORKER_ID',
    description: "names this process's delivery leases in the store (default: random)",
  },
  {
    name: 'ZEKT_RETENTION_INTERVAL_MS',
    description: 'how often the retention sweeper runs (default 3600000)',
  },
  {
    name: 'ZEKT_RECONCILE_INTERVAL_MS',
    description: 'how often a worker asks GitHub to redeliver missed webhooks (default 900000, 0 = never)',
  },
  {
    name: 'ZEKT_NOT_STARTED_AFTER',
    description:
      'a durable delivery GitHub accepted but no workflow run started for within this duration is flagged not started (default 10m)',
  },
  {
    name: 'ZEKT_SCHEMA_VALIDATION_TIMEOUT_MS',
    description:
      'checking one message against a service’s schema is stopped once it has used this much CPU time, and counts as failed (default 250)',
  },
  {
    name: 'ZEKT_SCHEMA_THREADS',
    description: 'threads that compile schemas and check messages against them (default 1)',
  },
  {
    name: 'ZEKT_ALERT_URL',
    description:
      'where operational alerts are POSTed as signed JSON (https in production; unset: only listed)',
  },
  {
    name: 'ZEKT_ALERT_SECRET',
    description:
      'Standard Webhooks secret the alerts are signed with: whsec_ + base64 (required with the URL)',
  },
  {
    name: 'ZEKT_ALERT_DEDUP_WINDOW_MS',
    description: 'an alert like one raised this recently is not raised again (default 3600000)',
  },
  {
    name: 'ZEKT_REQUEST_TIMEOUT_MS',
    description: 'a request (headers and body) must arrive within this long (default 30000)',
  },
  {
    name: 'ZEKT_BODY_BYTES_IN_FLIGHT',
    description: 'request body bytes one endpoint holds at once, beyond it 503 (default 67108864)',
  },
  { name: 'ZEKT_MAX_JSON_DEPTH', description: 'deepest JSON nesting accepted (default 64)' },
  {
    name: 'ZEKT_TRUST_PROXY',
    description:
      'true, or the proxy addresses whose X-Forwarded-For is believed (default false; a warning is logged once when requests carry X-Forwarded-For while it is false)',
  },
  {
    name: 'ZEKT_AUTH_FAILURE_LIMIT',
    description:
      'failed authentications a minute per client and per token prefix, and bad webhook signatures per hook (default 30)',
  },
  {
    name: 'ZEKT_API_CALL_LIMIT',
    description: 'management API calls a minute per token or session (default 600)',
  },
  { name: 'ZEKT_MAX_SERVICES_PER_ACCOUNT', description: 'services one account may have (default 200)' },
  { name: 'ZEKT_MAX_WORKFLOWS_PER_ACCOUNT', description: 'workflows one account may have (default 1000)' },
  {
    name: 'ZEKT_MAX_PENDING_REQUESTS_PER_ACCOUNT',
    description: 'subscription requests one consumer account may have waiting (default 100)',
  },
  {
    name: 'ZEKT_METRICS_PORT',
    description:
      'private port every process serves /metrics, /healthz and /readyz on (default 9464, 0 = any free)',
  },
  {
    name: 'ZEKT_METRICS_HOST',
    description: 'interface the metrics port listens on (default 127.0.0.1: this machine only)',
  },
  {
    name: 'ZEKT_METRICS_ON_API_PORT',
    description:
      'true: serve /metrics on the public API port too; requires ZEKT_METRICS_TOKEN (default false)',
  },
  {
    name: 'ZEKT_METRICS_TOKEN',
    description:
      'bearer token /metrics requires; wrong ones count towards ZEKT_AUTH_FAILURE_LIMIT (default: none)',
  },
  { name: 'LOG_LEVEL', description: `one of ${LOG_LEVELS.join(', ')} (default info)` },
  { name: 'NODE_ENV', description: 'production refuses development defaults (default development)' },
  ...TRACING_SETTINGS,
];

export interface LoadConfigOptions {
  /** Reads GITHUB_PRIVATE_KEY_PATH; injected for tests. */
  readFile?: (path: string) => string;
  cwd?: string;
}

/**
 * @example loadConfig(process.env) // throws ConfigError listing every missing or invalid variable
 */
export function loadConfig(env: Environment, options: LoadConfigOptions = {}): Config {
  const problems: string[] = [];
  const readFile = options.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  const cwd = options.cwd ?? process.cwd();
  const value = (name: string) => {
    const raw = env[name];
    return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
  };

  const modeRaw = value('NODE_ENV') ?? 'development';
  const mode: Mode = modeRaw === 'production' || modeRaw === 'test' ? modeRaw : 'development';

  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const parsed = Number(raw);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(raw)})`);
      return fallback;
    }
    return parsed;
  };

  const flag = (name: string, fallback: boolean): boolean => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    if (raw !== 'true' && raw !== 'false') {
      problems.push(`${name} must be true or false (got ${JSON.stringify(raw)})`);
      return fallback;
    }
    return raw === 'true';
  };

  const port = integer('PORT', 3000, 0, 65535);
  const host = value('HOST') ?? '0.0.0.0';

  const url = (name: string, fallback: string | undefined, protocols: string[]): string | undefined => {
    const raw = value(name) ?? fallback;
    if (raw === undefined) return undefined;
    // Errors quote the value, never credentials written into it.
    const shown = JSON.stringify(raw.replace(/\/\/[^/@\s]*@/, '//***@'));
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) {
        problems.push(`${name} must be a ${protocols.join(' or ')} URL (got ${shown})`);
        return undefined;
      }
      return raw.replace(/\/+$/, '');
    } catch {
      problems.push(`${name} must be an absolute URL (got ${shown})`);
      return undefined;
    }
  };

  let baseUrl = url('ZEKT_BASE_URL', undefined, ['http:', 'https:']);
  if (baseUrl === undefined && value('ZEKT_BASE_URL') === undefined) {
    if (mode === 'production') {
      problems.push(
        'ZEKT_BASE_URL is required in production: the public https URL GitHub and consumers reach Zekt at',
      );
    } else {
      baseUrl = `http://localhost:${port}`;
    }
  }

  let database: Config['database'] = { kind: 'sqlite', path: resolve(cwd, '.zekt', 'zekt.db') };
  try {
    database = loadStoreConfig(env, { cwd });
  } catch (error) {
    problems.push(...(error as ConfigError).problems);
  }

  const app = loadAppSettings(value, { cwd, readFile }, problems);

  const secret = value('ZEKT_SECRET');
  if (secret === undefined) {
    problems.push(
      `ZEKT_SECRET is required: at least ${MIN_SECRET_LENGTH} random characters, generated once with openssl rand -hex 32 and kept (it encrypts hook secrets and the GitHub App registered through setup; every process needs the same one)`,
    );
  } else if (secret.length < MIN_SECRET_LENGTH) {
    problems.push(`ZEKT_SECRET must be at least ${MIN_SECRET_LENGTH} characters long (openssl rand -hex 32)`);
  } else if (mode === 'production' && /^(dev|development|changeme|secret|test)/i.test(secret)) {
    problems.push('ZEKT_SECRET looks like a development placeholder; generate one with openssl rand -hex 32');
  }

  const apiUrl =
    url('GITHUB_API_URL', 'https://api.github.com', ['http:', 'https:']) ?? 'https://api.github.com';
  const webUrl = url('GITHUB_URL', githubWebUrlFor(apiUrl), ['http:', 'https:']) ?? githubWebUrlFor(apiUrl);
  const issuer =
    url('ZEKT_OIDC_ISSUER', 'https://token.actions.githubusercontent.com', ['http:', 'https:']) ??
    'https://token.actions.githubusercontent.com';
  if (mode === 'production' && baseUrl?.startsWith('http://')) {
    problems.push('ZEKT_BASE_URL must use https in production: consumer workflows send their tokens to it');
  }

  let retryScheduleMs = [...DEFAULT_RETRY_SCHEDULE_MS];
  const scheduleRaw = value('ZEKT_RETRY_SCHEDULE');
  if (scheduleRaw !== undefined) {
    const parsed = scheduleRaw.split(',').map((part) => parseDurationMs(part.trim()));
    if (parsed.some((ms) => ms === null) || parsed.length === 0 || parsed.length > 50) {
      problems.push(
        `ZEKT_RETRY_SCHEDULE must be 1–50 comma-separated durations such as 0s,10s,1m,5m,2h (got ${JSON.stringify(scheduleRaw)})`,
      );
    } else {
      retryScheduleMs = parsed as number[];
    }
  }
  let runFollowScheduleMs = [...DEFAULT_RUN_FOLLOW_SCHEDULE_MS];
  const followRaw = value('ZEKT_RUN_FOLLOW_SCHEDULE');
  if (followRaw !== undefined) {
    const parsed = followRaw.split(',').map((part) => parseDurationMs(part.trim()));
    if (
      parsed.some((ms) => ms === null || ms < 100 || ms > DAY_MS) ||
      parsed.length === 0 ||
      parsed.length > 50
    ) {
      problems.push(
        `ZEKT_RUN_FOLLOW_SCHEDULE must be 1–50 comma-separated durations from 100ms to 1d such as 5s,30s,2m,15m, the last repeating (got ${JSON.stringify(followRaw)})`,
      );
    } else {
      runFollowScheduleMs = parsed as number[];
    }
  }
  const dispatchTimeoutMs = integer('ZEKT_DISPATCH_TIMEOUT_MS', 10_000, 100, 120_000);
  const leaseMs = integer('ZEKT_LEASE_MS', 60_000, 200, HOUR_MS);
  if (leaseMs <= dispatchTimeoutMs) {
    problems.push(
      `ZEKT_LEASE_MS (${leaseMs}) must be longer than ZEKT_DISPATCH_TIMEOUT_MS (${dispatchTimeoutMs}): a lease must outlast the call it protects`,
    );
  }

  let notStartedAfterMs = DEFAULT_NOT_STARTED_AFTER_MS;
  const notStartedRaw = value('ZEKT_NOT_STARTED_AFTER');
  if (notStartedRaw !== undefined) {
    const parsed = parseDurationMs(notStartedRaw);
    if (parsed === null || parsed < 1000 || parsed > 7 * DAY_MS) {
      problems.push(
        `ZEKT_NOT_STARTED_AFTER must be a duration from 1s to 7d such as 10m or 30m (got ${JSON.stringify(notStartedRaw)})`,
      );
    } else {
      notStartedAfterMs = parsed;
    }
  }
  let alertUrl = url('ZEKT_ALERT_URL', undefined, ['http:', 'https:']) ?? null;
  if (alertUrl !== null && hasUserinfo(alertUrl)) {
    // fetch refuses such a URL, and its error quotes it whole: every send would fail and put the
    // password in front of the tenants the alerts are about.
    problems.push(
      'ZEKT_ALERT_URL must not hold a user name or password (https://user:pass@host/…): the receiver verifies alerts by their signature (ZEKT_ALERT_SECRET); remove the credentials from the URL',
    );
    alertUrl = null;
  }
  if (mode === 'production' && alertUrl?.startsWith('http://')) {
    problems.push(
      `ZEKT_ALERT_URL must use https in production: alerts name accounts, repositories and their health (got ${JSON.stringify(alertUrl)})`,
    );
  }
  const alertSecret = value('ZEKT_ALERT_SECRET') ?? null;
  if (alertSecret !== null && parseWebhookSecret(alertSecret) === null) {
    problems.push(
      'ZEKT_ALERT_SECRET must be a Standard Webhooks secret: whsec_ followed by the base64 of at least 24 random bytes (echo whsec_$(openssl rand -base64 32))',
    );
  } else if (alertUrl !== null && alertSecret === null) {
    problems.push(
      'ZEKT_ALERT_SECRET is required with ZEKT_ALERT_URL: the receiver verifies the alerts with it (echo whsec_$(openssl rand -base64 32))',
    );
  }

  const metricsToken = value('ZEKT_METRICS_TOKEN') ?? null;
  if (metricsToken !== null && metricsToken.length < 16) {
    problems.push(
      'ZEKT_METRICS_TOKEN must be at least 16 characters (openssl rand -hex 16): it is all that keeps /metrics from anyone who reaches the port',
    );
  }
  const metricsPort = integer('ZEKT_METRICS_PORT', 9464, 0, 65535);
  if (metricsPort !== 0 && metricsPort === port) {
    problems.push(
      `ZEKT_METRICS_PORT (${metricsPort}) must differ from PORT: the metrics port is private, the API's is public`,
    );
  }
  const metricsOnApiPort = flag('ZEKT_METRICS_ON_API_PORT', false);
  if (metricsOnApiPort && metricsToken === null) {
    problems.push(
      'ZEKT_METRICS_ON_API_PORT=true puts /metrics on the public API port: set ZEKT_METRICS_TOKEN too (openssl rand -hex 16), or scrape the private ZEKT_METRICS_PORT instead',
    );
  }

  const trustProxy = parseTrustProxy(value('ZEKT_TRUST_PROXY'), problems);

  const logLevel = value('LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const config: Config = {
    mode,
    host,
    port,
    baseUrl: baseUrl ?? '',
    database,
    github: { app, apiUrl, webUrl },
    oidc: { issuer, audience: value('ZEKT_OIDC_AUDIENCE') ?? 'api://zekt' },
    secret: secret ?? '',
    installationDispatchRate: integer('ZEKT_INSTALLATION_DISPATCH_RATE', 80, 0, 100_000),
    messageGraceMs: integer('ZEKT_MESSAGE_GRACE_MS', 0, 0, HOUR_MS),
    pollIntervalMs: integer('ZEKT_POLL_INTERVAL_MS', 1000, 10, 60_000),
    retryScheduleMs,
    runFollowScheduleMs,
    dispatchTimeoutMs,
    dispatchConcurrency: integer('ZEKT_DISPATCH_CONCURRENCY', 64, 1, 10_000),
    installationConcurrency: integer('ZEKT_INSTALLATION_CONCURRENCY', 8, 1, 10_000),
    leaseMs,
    retentionIntervalMs: integer('ZEKT_RETENTION_INTERVAL_MS', HOUR_MS, 1_000, 7 * DAY_MS),
    alerts: {
      url: alertUrl,
      secret: alertSecret,
      dedupWindowMs: integer('ZEKT_ALERT_DEDUP_WINDOW_MS', DEFAULT_ALERT_DEDUP_WINDOW_MS, 0, 7 * DAY_MS),
    },
    reconcileIntervalMs: integer('ZEKT_RECONCILE_INTERVAL_MS', 900_000, 0, DAY_MS),
    notStartedAfterMs,
    schemas: {
      threads: integer('ZEKT_SCHEMA_THREADS', 1, 1, 64),
      validationTimeoutMs: integer('ZEKT_SCHEMA_VALIDATION_TIMEOUT_MS', 250, 10, 60_000),
      // A 64 KB schema of 700 patterns compiles in ~0.6 s here; ten times that is a runaway.
      compileTimeoutMs: 10_000,
    },
    workerId: value('ZEKT_WORKER_ID') ?? null,
    metrics: {
      port: metricsPort,
      host: value('ZEKT_METRICS_HOST') ?? '127.0.0.1',
      onApiPort: metricsOnApiPort,
      token: metricsToken,
    },
    logLevel,
    http: {
      requestTimeoutMs: integer('ZEKT_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
      bodyBytesInFlight: integer('ZEKT_BODY_BYTES_IN_FLIGHT', 64 * 1024 * 1024, 64 * 1024, 2 ** 40),
      maxJsonDepth: integer('ZEKT_MAX_JSON_DEPTH', 64, 8, 10_000),
      trustProxy,
    },
    limits: {
      authFailuresPerMinute: integer('ZEKT_AUTH_FAILURE_LIMIT', 30, 1, 1_000_000),
      apiCallsPerMinute: integer('ZEKT_API_CALL_LIMIT', 600, 1, 1_000_000),
      servicesPerAccount: integer('ZEKT_MAX_SERVICES_PER_ACCOUNT', 200, 1, 1_000_000),
      workflowsPerAccount: integer('ZEKT_MAX_WORKFLOWS_PER_ACCOUNT', 1_000, 1, 1_000_000),
      pendingRequestsPerAccount: integer('ZEKT_MAX_PENDING_REQUESTS_PER_ACCOUNT', 100, 1, 1_000_000),
    },
    tracing: parseTracingConfig(value, problems),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function hasUserinfo(url: string): boolean {
  const parsed = new URL(url);
  return parsed.username !== '' || parsed.password !== '';
}

const APP_SETTINGS = [
  'GITHUB_APP_ID',
  'GITHUB_PRIVATE_KEY',
  'GITHUB_PRIVATE_KEY_PATH',
  'GITHUB_WEBHOOK_SECRET',
  'GITHUB_CLIENT_ID',
  'GITHUB_CLIENT_SECRET',
];

/**
 * The GitHub App's settings: none at all is a choice (the App registered through setup, or setup
 * mode); any of them asks for the App's id, key and webhook secret, all checked.
 */
function loadAppSettings(
  value: (name: string) => string | undefined,
  files: { cwd: string; readFile: (path: string) => string },
  problems: string[],
): AppSettings | null {
  if (APP_SETTINGS.every((name) => value(name) === undefined)) return null;
  const appIdRaw = value('GITHUB_APP_ID');
  let appId = 0;
  if (appIdRaw === undefined) {
    problems.push(
      "GITHUB_APP_ID is required with the App's other settings: the App id from the GitHub App's settings page (or unset them all to register the App through setup)",
    );
  } else if (!/^\d+$/.test(appIdRaw)) {
    problems.push(`GITHUB_APP_ID must be the App's numeric id (got ${JSON.stringify(appIdRaw)})`);
  } else {
    appId = Number(appIdRaw);
  }

  let privateKey = value('GITHUB_PRIVATE_KEY')?.replace(/\\n/g, '\n');
  const keyPath = value('GITHUB_PRIVATE_KEY_PATH');
  if (privateKey === undefined && keyPath !== undefined) {
    try {
      privateKey = files.readFile(resolve(files.cwd, keyPath));
    } catch (error) {
      problems.push(`GITHUB_PRIVATE_KEY_PATH ${keyPath} cannot be read: ${(error as Error).message}`);
    }
  }
  if (privateKey === undefined) {
    if (keyPath === undefined) {
      problems.push(
        "GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH is required: the App's private key (.pem)",
      );
    }
  } else if (!/-----BEGIN (RSA )?PRIVATE KEY-----/.test(privateKey)) {
    problems.push('the GitHub App private key must be a PEM file (-----BEGIN RSA PRIVATE KEY-----)');
  }

  const webhookSecret = value('GITHUB_WEBHOOK_SECRET');
  if (webhookSecret === undefined) {
    problems.push("GITHUB_WEBHOOK_SECRET is required: the webhook secret from the GitHub App's settings");
  }
  const clientId = value('GITHUB_CLIENT_ID') ?? null;
  const clientSecret = value('GITHUB_CLIENT_SECRET') ?? null;
  if ((clientId === null) !== (clientSecret === null)) {
    problems.push(
      "GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET go together: both from the App's settings page, or neither (no console login)",
    );
  }
  return {
    appId,
    privateKey: privateKey ?? '',
    webhookSecret: webhookSecret ?? '',
    clientId,
    clientSecret,
  };
}

/**
 * `ZEKT_TRUST_PROXY`: unset or `false` believes no proxy (the socket's address is the client);
 * `true` believes every hop; anything else is a comma-separated list of the proxies' addresses or
 * CIDR ranges — Fastify's `trustProxy`.
 */
function parseTrustProxy(raw: string | undefined, problems: string[]): boolean | string[] {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  const addresses = raw.split(',').map((part) => part.trim());
  if (addresses.some((a) => !/^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(a))) {
    problems.push(
      `ZEKT_TRUST_PROXY must be true, false, or proxy addresses such as 10.0.0.1,10.1.0.0/16 (got ${JSON.stringify(raw)})`,
    );
    return false;
  }
  return addresses;
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
