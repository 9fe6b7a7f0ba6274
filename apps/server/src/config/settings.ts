import { DEFAULT_ALERT_DEDUP_WINDOW_MS } from '../domain/alerts.js';
import { DAY_MS, HOUR_MS } from '../domain/duration.js';
import { DEFAULT_NOT_STARTED_AFTER_MS } from '../domain/not-started.js';
import { DEFAULT_RETRY_SCHEDULE_MS } from '../domain/retry-schedule.js';
import { DEFAULT_RUN_FOLLOW_SCHEDULE_MS } from '../domain/run-following.js';
import { parseWebhookSecret } from '../security/standard-webhooks.js';
import {
  custom,
  duration,
  durations,
  flag,
  integer,
  oneOf,
  optionalText,
  type Setting,
  text,
  url,
} from './setting.js';

export const MIN_SECRET_LENGTH = 32;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const MODES = ['production', 'development', 'test'] as const;
const WEB = ['http:', 'https:'];

/**
 * Every environment variable Zekt reads, once: how it is read (default, bounds), what
 * `zekt serve --help` says and docs/configuration.md's row. `loadConfig` reads them in this order
 * (so problems come in it), then applies the rules that relate them (cross-field-rules.ts).
 */
export const SETTINGS = {
  PORT: integer({
    group: 'service',
    help: 'HTTP port',
    doc: 'HTTP port; one another process holds stops the start (exit 2, naming `PORT`); `0` takes any free one',
    default: 3000,
    min: 0,
    max: 65535,
  }),
  HOST: text({
    group: 'service',
    help: 'interface to listen on',
    doc: 'interface to listen on',
    default: '0.0.0.0',
  }),
  ZEKT_BASE_URL: url({
    group: 'service',
    help: 'public URL of this service; required in production (default: http://localhost:$PORT)',
    doc: 'public URL of the service: the repository webhooks Zekt places point at `$ZEKT_BASE_URL/webhooks/github`, and `payloadRef` links are built from it',
    docDefault: '`http://localhost:$PORT` (required in production, https)',
    protocols: WEB,
  }),
  DATABASE_URL: custom({
    group: 'service',
    help: 'postgres://… to use PostgreSQL; unset for the embedded SQLite store',
    doc: '`postgres://…` (or `postgresql://…`) selects PostgreSQL, shared by every process (see operations.md, *Scale-out*); unset means the embedded SQLite store. At start-up an unreachable database, a database or role that does not exist, or a role that may not create tables exits with status 2 and the command that fixes it (operations.md, *Start-up checks*)',
    shown: null,
    read: (raw, name, problems): string | null => {
      if (raw === undefined) return null;
      if (/^postgres(ql)?:\/\//.test(raw)) return raw;
      problems.push(
        `${name} must start with postgres:// or postgresql://; unset it to use the embedded SQLite store`,
      );
      return null;
    },
  }),
  ZEKT_DATABASE_PREPARED_STATEMENTS: flag({
    group: 'service',
    help: 'PostgreSQL: prepare statements with names; false behind a pooler that cannot keep them',
    doc: "PostgreSQL: each connection prepares Zekt's statements by name, so the server parses and plans them once instead of on every run (half of PostgreSQL's CPU per event under load). Set `false` only behind a pooler that cannot keep prepared statements across transactions: PgBouncer before 1.21 in transaction mode, or with `max_prepared_statements = 0`",
    default: true,
    onlyWith: 'DATABASE_URL',
    invalid: ': false only behind a pooler that cannot keep prepared statements',
  }),
  ZEKT_DATA_DIR: text({
    group: 'service',
    help: 'directory of the embedded store',
    doc: 'directory of the embedded store (`zekt.db`)',
    default: './.zekt',
  }),
  GITHUB_APP_ID: custom({
    group: 'service',
    help: "the GitHub App's id (unset, with the key and webhook secret: the App registered through setup, or setup mode)",
    doc: "the GitHub App's numeric id. Leave all of the App's settings unset to register the App from Zekt instead ([setup.md](setup.md)); set any of them and `GITHUB_APP_ID`, the key and the webhook secret are required, and win over an App registered through setup",
    docDefault: 'unset: the App registered through setup',
    shown: null,
    read: (raw, name, problems): number | null => {
      if (raw === undefined) return null;
      if (/^\d+$/.test(raw)) return Number(raw);
      problems.push(`${name} must be the App's numeric id (got ${JSON.stringify(raw)})`);
      return null;
    },
  }),
  GITHUB_PRIVATE_KEY: custom({
    group: 'service',
    help: "the App's private key, PEM (or GITHUB_PRIVATE_KEY_PATH)",
    doc: "the App's private key (PEM; `\\n` escapes are accepted)",
    docDefault: 'required with `GITHUB_APP_ID` (or `_PATH`)',
    shown: null,
    // A key pasted into one line of an env file keeps its line breaks as \n.
    read: (raw): string | null => raw?.replace(/\\n/g, '\n') ?? null,
  }),
  GITHUB_PRIVATE_KEY_PATH: optionalText({
    group: 'service',
    help: "file holding the App's private key",
    doc: "a file holding the App's private key",
    docDefault: '',
  }),
  GITHUB_WEBHOOK_SECRET: optionalText({
    group: 'service',
    help: "the App's webhook secret (required with GITHUB_APP_ID)",
    doc: "the App's webhook secret; verifies App-level webhooks (installation events)",
    docDefault: 'required with `GITHUB_APP_ID`',
  }),
  GITHUB_CLIENT_ID: optionalText({
    group: 'service',
    help: "the App's OAuth client id (console login)",
    doc: "the App's OAuth credentials (App settings → *Client secrets*), both or neither: the console's *log in with GitHub*. Set the App's *Callback URL* to `$ZEKT_BASE_URL/auth/callback`. Unset: `/auth/login` answers `503 oauth_not_configured`; API tokens still work. An App registered through setup brings its own",
  }),
  GITHUB_CLIENT_SECRET: optionalText({
    group: 'service',
    help: "the App's OAuth client secret (console login)",
    doc: '',
    sameRowAs: 'GITHUB_CLIENT_ID',
  }),
  GITHUB_API_URL: url({
    group: 'service',
    help: 'GitHub REST base URL',
    doc: "GitHub's REST base URL (`https://<ghes>/api/v3` for Enterprise Server, the simulator's `/api/v3` in development)",
    default: 'https://api.github.com',
    protocols: WEB,
  }),
  GITHUB_URL: url({
    group: 'service',
    help: "GitHub's web root: the console login and registering the App from a manifest (default: from GITHUB_API_URL)",
    doc: "GitHub's web root, where the login pages are and where the App is registered from its manifest ([setup.md](setup.md)): `https://github.com` for `api.github.com`, `<root>` for `<root>/api/v3` (Enterprise Server, the simulator), `https://<sub>.ghe.com` for `api.<sub>.ghe.com`",
    docDefault: 'from `GITHUB_API_URL`',
    protocols: WEB,
  }),
  ZEKT_OIDC_ISSUER: url({
    group: 'service',
    help: 'Actions OIDC issuer',
    doc: 'issuer of the Actions OIDC tokens the message action sends; keys come from `$ZEKT_OIDC_ISSUER/.well-known/jwks`',
    default: 'https://token.actions.githubusercontent.com',
    protocols: WEB,
  }),
  ZEKT_OIDC_AUDIENCE: text({
    group: 'service',
    help: 'audience the message action requests',
    doc: 'audience those tokens must be issued for',
    default: 'api://zekt',
  }),
  ZEKT_SECRET: custom({
    group: 'service',
    help: `at least ${MIN_SECRET_LENGTH} random characters: MAC and encryption key, the same in every process (required)`,
    doc: 'key material: per-delivery token MACs, the setup code, and the encryption at rest of hook secrets and of the GitHub App registered through setup (HKDF-derived keys per purpose). Required even in setup mode; generate it once (`openssl rand -hex 32`) and give every process the same one. Changing it makes stored hook secrets unreadable (re-enable provider repositories afterwards) and the registered App too: `zekt serve` then refuses to start, naming `ZEKT_SECRET`',
    docDefault: `required, ≥ ${MIN_SECRET_LENGTH} characters`,
    shown: null,
    read: (raw, name, problems): string => {
      if (raw === undefined) {
        problems.push(
          `${name} is required: at least ${MIN_SECRET_LENGTH} random characters, generated once with openssl rand -hex 32 and kept (it encrypts hook secrets and the GitHub App registered through setup; every process needs the same one)`,
        );
        return '';
      }
      if (raw.length < MIN_SECRET_LENGTH) {
        problems.push(`${name} must be at least ${MIN_SECRET_LENGTH} characters long (openssl rand -hex 32)`);
      }
      return raw;
    },
  }),
  ZEKT_INSTALLATION_DISPATCH_RATE: integer({
    group: 'service',
    help: 'dispatches per minute per consumer installation, 0 = unpaced',
    doc: 'calls per minute per consumer installation: dispatches, and the reads of the consumer runs Zekt follows, share it; `0` turns pacing off',
    default: 80,
    min: 0,
    max: 100_000,
  }),
  ZEKT_MESSAGE_GRACE_MS: integer({
    group: 'service',
    help: 'how long a completed run waits for a late message',
    doc: 'how long a completed run waits for a late message before it is routed; a message arriving within the grace period routes the run at once',
    default: 0,
    min: 0,
    max: HOUR_MS,
  }),
  ZEKT_POLL_INTERVAL_MS: integer({
    group: 'service',
    help: 'safety-net poll of the store for due work',
    doc: 'how often idle workers look at the store for due work (wake-ups make routing immediate; the poll is the safety net)',
    default: 1000,
    min: 10,
    max: 60_000,
  }),
  ZEKT_RETRY_SCHEDULE: durations({
    group: 'service',
    help: 'durable dispatch schedule, comma-separated durations',
    doc: "the waits of a durable delivery's attempts: the first entry before the first attempt, entry *n* after the *n*-th failed attempt (comma-separated durations such as `0s,10s,1m,2h`); each wait gets ±20 % jitter, and GitHub's `Retry-After` / `x-ratelimit-reset` wins when it asks for longer (capped at 24 h). The delivery is Failed when the schedule is exhausted",
    default: DEFAULT_RETRY_SCHEDULE_MS,
    expected: '1–50 comma-separated durations such as 0s,10s,1m,5m,2h',
  }),
  ZEKT_RUN_FOLLOW_SCHEDULE: durations({
    group: 'service',
    help: 'delays between reads of a consumer run Zekt follows (workflow_dispatch, durable, no COMPLETION), comma-separated durations, the last repeating',
    doc: "the waits between Zekt's reads of a consumer run it follows (a durable `workflow_dispatch` delivery whose repository has COMPLETION off): entry *n* after the *n*-th read, the last one repeating until the run ends (comma-separated durations from `100ms` to `1d`); ±20 % jitter, and GitHub's `Retry-After` wins when longer. Each read is one API call of the consumer's installation, paced with its dispatches (`ZEKT_INSTALLATION_DISPATCH_RATE`): the default reads a one-minute run 5 times, an hour-long one 11 times",
    default: DEFAULT_RUN_FOLLOW_SCHEDULE_MS,
    min: 100,
    max: DAY_MS,
    expected: '1–50 comma-separated durations from 100ms to 1d such as 5s,30s,2m,15m, the last repeating',
  }),
  ZEKT_DISPATCH_TIMEOUT_MS: integer({
    group: 'service',
    help: 'timeout of one repository_dispatch call',
    doc: 'how long one call to GitHub of the dispatcher may take (a `repository_dispatch` or `workflow_dispatch`, or a read of a followed run) before it is recorded as a `timeout`',
    default: 10_000,
    min: 100,
    max: 120_000,
  }),
  ZEKT_DISPATCH_CONCURRENCY: integer({
    group: 'service',
    help: 'repository_dispatch calls one worker has in flight at most',
    doc: '`repository_dispatch` calls one worker process has in flight at most. The pool is refilled as each call ends, so one slow call holds back only its own slot',
    default: 64,
    min: 1,
    max: 10_000,
  }),
  ZEKT_INSTALLATION_CONCURRENCY: integer({
    group: 'service',
    help: 'of those, calls to one consumer installation at most',
    doc: "of those, calls to one consumer installation at most, so a slow or throttled installation never fills the pool (pacing still spaces each installation's calls)",
    default: 8,
    min: 1,
    max: 10_000,
  }),
  ZEKT_LEASE_MS: integer({
    group: 'service',
    help: 'how long a worker owns a claimed delivery, longer than ZEKT_DISPATCH_TIMEOUT_MS',
    doc: 'how long a worker owns a claimed delivery; must exceed `ZEKT_DISPATCH_TIMEOUT_MS`. When a worker dies, its deliveries are taken over after this long',
    default: 60_000,
    min: 200,
    max: HOUR_MS,
  }),
  ZEKT_WORKER_ID: optionalText({
    group: 'service',
    help: "names this process's delivery leases in the store (default: random)",
    doc: 'the name a worker writes into the leases it holds (`deliveries.lease_owner`); set it to the host or pod name so an operator can see who holds what',
    docDefault: 'random per start',
  }),
  ZEKT_RETENTION_INTERVAL_MS: integer({
    group: 'service',
    help: 'how often the retention sweeper runs',
    doc: 'how often the retention sweeper runs (worker role)',
    default: HOUR_MS,
    min: 1_000,
    max: 7 * DAY_MS,
  }),
  ZEKT_RECONCILE_INTERVAL_MS: integer({
    group: 'service',
    help: 'how often a worker asks GitHub to redeliver missed webhooks, 0 = never',
    doc: 'how often a worker lists the recent deliveries of the App webhook and of every hook Zekt placed and asks GitHub to redeliver the failed ones (docs/operations.md, Missed webhooks); `0`: never on a schedule, only `zekt reconcile`',
    docDefault: '`900000` (15 min)',
    default: 900_000,
    min: 0,
    max: DAY_MS,
  }),
  ZEKT_NOT_STARTED_AFTER: duration({
    group: 'service',
    help: 'a durable delivery GitHub accepted but no workflow run started for within this duration is flagged not started',
    doc: "a durable delivery GitHub accepted (204) that is neither confirmed nor seen by completion tracking within this duration (`1s`–`7d`) is flagged *not started* (`notStartedAt`): GitHub accepts a `repository_dispatch` even when no workflow on the default branch listens for its event type. Flagged deliveries count against the connection's health and have their own diagnostics category",
    default: DEFAULT_NOT_STARTED_AFTER_MS,
    min: 1000,
    max: 7 * DAY_MS,
    expected: 'a duration from 1s to 7d such as 10m or 30m',
  }),
  ZEKT_SCHEMA_VALIDATION_TIMEOUT_MS: integer({
    group: 'service',
    help: 'checking one message against a service’s schema is stopped once it has used this much CPU time, and counts as failed',
    doc: "how much CPU time checking one message against a service's message schema may use (`10`–`60000` ms, measured on the checking thread, so a check that only waits for a core on a busy machine is not stopped; wall time where the thread's CPU time cannot be read, and never more than 40 times this in wall time). A check past it is stopped and counts as failed: an enforced schema refuses the message with `422 schema_validation_timeout` (docs/contracts.md)",
    default: 250,
    min: 10,
    max: 60_000,
  }),
  ZEKT_SCHEMA_THREADS: integer({
    group: 'service',
    help: 'threads that compile schemas and check messages against them',
    doc: 'threads that compile message schemas and check messages against them, off the event loop (`1`–`64`); each is started when first needed and keeps the schemas it compiled',
    default: 1,
    min: 1,
    max: 64,
  }),
  ZEKT_ALERT_URL: url({
    group: 'service',
    help: 'where operational alerts are POSTed as signed JSON (https in production; unset: only listed)',
    doc: 'where operational alerts are POSTed as signed JSON (docs/operations.md, Alerts); must be https in production, and must not hold a user name or password (`https://user:pass@…`; the receiver verifies the signature instead): Zekt refuses to start otherwise. Redirects of the receiver are not followed. Unset: alerts are only listed in the console and `GET /api/v1/alerts`',
    protocols: WEB,
    // fetch refuses such a URL, and its error quotes it whole: every send would fail and put the
    // password in front of the tenants the alerts are about.
    check: (value, name) =>
      hasUserinfo(value)
        ? `${name} must not hold a user name or password (https://user:pass@host/…): the receiver verifies alerts by their signature (ZEKT_ALERT_SECRET); remove the credentials from the URL`
        : null,
  }),
  ZEKT_ALERT_SECRET: optionalText({
    group: 'service',
    help: 'Standard Webhooks secret the alerts are signed with: whsec_ + base64 (required with the URL)',
    doc: 'the Standard Webhooks secret alerts are signed with: `whsec_` + base64 of at least 24 random bytes (`echo whsec_$(openssl rand -base64 32)`); give the receiver the same value',
    docDefault: 'unset; required with `ZEKT_ALERT_URL`',
    check: (value, name) =>
      parseWebhookSecret(value) === null
        ? `${name} must be a Standard Webhooks secret: whsec_ followed by the base64 of at least 24 random bytes (echo whsec_$(openssl rand -base64 32))`
        : null,
  }),
  ZEKT_ALERT_DEDUP_WINDOW_MS: integer({
    group: 'service',
    help: 'an alert like one raised this recently is not raised again',
    doc: 'an alert of the same kind about the same connection or delivery raised this recently is not raised again',
    docDefault: '`3600000` (1 h)',
    default: DEFAULT_ALERT_DEDUP_WINDOW_MS,
    min: 0,
    max: 7 * DAY_MS,
  }),
  // The token is read before the port: a short token is the first thing to fix.
  ZEKT_METRICS_TOKEN: optionalText({
    group: 'service',
    help: 'bearer token /metrics requires; wrong ones count towards ZEKT_AUTH_FAILURE_LIMIT (default: none)',
    doc: 'a bearer token `/metrics` then requires (`Authorization: Bearer …`, compared in constant time; at least 16 characters); a missing or wrong one is answered `401` problem+json, and `ZEKT_AUTH_FAILURE_LIMIT` wrong ones a minute from one client get `429` until the minute ends. Unset, `/metrics` on the private port is open to whoever reaches that port: it carries no secret and names no account, repository or installation (docs/operations.md, *Metrics*); set it when anything but your monitoring can reach the port',
    check: (value, name) =>
      value.length < 16
        ? `${name} must be at least 16 characters (openssl rand -hex 16): it is all that keeps /metrics from anyone who reaches the port`
        : null,
  }),
  ZEKT_METRICS_PORT: integer({
    group: 'service',
    help: 'private port every process serves /metrics, /healthz and /readyz on, 0 = any free',
    doc: 'the private port every process, whatever its role, listens on for `/metrics`, `/healthz` and `/readyz` — nothing else is served there (docs/operations.md, *Health*). A worker-only process has no other port; the api and `all` roles also answer `/healthz` and `/readyz` on `PORT`. Processes sharing a machine need a port each (a taken port stops the process at start); `0` takes any free port (the URL is printed at start). Must differ from `PORT`',
    default: 9464,
    min: 0,
    max: 65535,
  }),
  ZEKT_METRICS_HOST: text({
    group: 'service',
    help: 'interface the metrics port listens on; the default lets this machine only in',
    doc: 'the interface the metrics port listens on: loopback, so only this machine reaches it. In a container whose probes and scraper come from outside (Kubernetes), set `0.0.0.0` and keep the port off public load balancers',
    default: '127.0.0.1',
  }),
  ZEKT_METRICS_ON_API_PORT: flag({
    group: 'service',
    help: 'true: serve /metrics on the public API port too; requires ZEKT_METRICS_TOKEN',
    doc: "`true` serves `/metrics` on the public API port (`PORT`) as well; requires `ZEKT_METRICS_TOKEN` (Zekt refuses to start otherwise): the counters show the deployment's activity as it happens",
    default: false,
  }),
  ZEKT_REQUEST_TIMEOUT_MS: integer({
    group: 'service',
    help: 'a request (headers and body) must arrive within this long',
    doc: "a request's body must arrive within this long after its headers (`408 request_timeout`); slow headers are cut by Node at the same bound, a request as a whole at twice it",
    default: 30_000,
    min: 100,
    max: 600_000,
  }),
  ZEKT_BODY_BYTES_IN_FLIGHT: integer({
    group: 'service',
    help: 'request body bytes one endpoint holds at once, beyond it 503',
    doc: "request body bytes one endpoint of one process reads or holds at once; a request that would go over is answered `503 server_unavailable` with `Retry-After` (from its `Content-Length`, or as its chunks arrive). Per process on purpose: it protects that process's memory",
    docDefault: '`67108864` (64 MiB)',
    default: 64 * 1024 * 1024,
    min: 64 * 1024,
    max: 2 ** 40,
  }),
  ZEKT_MAX_JSON_DEPTH: integer({
    group: 'service',
    help: 'deepest JSON nesting accepted',
    doc: 'deepest nesting of arrays and objects in any JSON Zekt parses (bodies, webhooks, a message payload held in a string); deeper is `400 json_too_deep`',
    default: 64,
    min: 8,
    max: 10_000,
  }),
  ZEKT_TRUST_PROXY: custom({
    group: 'service',
    help: 'true, or the proxy addresses whose X-Forwarded-For is believed; while false, a warning is logged once when requests carry X-Forwarded-For',
    doc: "`true`, or the addresses (CIDR allowed, comma-separated) of the reverse proxies whose `X-Forwarded-For` names the client. Set it behind a proxy: rate limits key on the client's address, and without it every client is the proxy — `ZEKT_AUTH_FAILURE_LIMIT` bad tokens from anyone then lock every client out. While it is `false`, the first request that carries `X-Forwarded-For` logs a warning (once per process) saying so",
    shown: 'false',
    read: readTrustProxy,
  }),
  ZEKT_AUTH_FAILURE_LIMIT: integer({
    group: 'service',
    help: 'failed authentications a minute per client and per token prefix, and bad webhook signatures per hook',
    doc: "failed authentications a minute per client address and per token prefix (bad API or delivery tokens, session cookies, OIDC tokens); beyond it that client (or prefix) gets `429 rate_limited` until the minute ends, before any credential is checked. Webhooks are the exception: GitHub sends every tenant's from the same addresses, so their signature is checked first, a validly signed webhook is never refused, and only bad signatures are counted — per hook Zekt placed (any other hook id, or none, shares one count) — and answered `429` beyond the limit. Counted in the store, shared by every API process",
    default: 30,
    min: 1,
    max: 1_000_000,
  }),
  ZEKT_API_CALL_LIMIT: integer({
    group: 'service',
    help: 'management API calls a minute per token or session',
    doc: 'management API calls a minute per API token or console session (`429 rate_limited` beyond); counted in the store',
    default: 600,
    min: 1,
    max: 1_000_000,
  }),
  ZEKT_MAX_SERVICES_PER_ACCOUNT: integer({
    group: 'service',
    help: 'services one account may have',
    doc: 'services one provider account may have (`409 limit_reached`)',
    default: 200,
    min: 1,
    max: 1_000_000,
  }),
  ZEKT_MAX_WORKFLOWS_PER_ACCOUNT: integer({
    group: 'service',
    help: 'workflows one account may have',
    doc: "workflows (seen or declared) across one account's repositories; declaring another is `409 limit_reached` (runs GitHub reports are still recorded)",
    default: 1_000,
    min: 1,
    max: 1_000_000,
  }),
  ZEKT_MAX_PENDING_REQUESTS_PER_ACCOUNT: integer({
    group: 'service',
    help: 'subscription requests one consumer account may have waiting',
    doc: 'subscription requests one consumer account may have waiting for a decision (`409 limit_reached`)',
    default: 100,
    min: 1,
    max: 1_000_000,
  }),
  LOG_LEVEL: oneOf({
    group: 'service',
    help: `one of ${LOG_LEVELS.join(', ')}`,
    doc: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`',
    words: LOG_LEVELS,
    default: 'info',
  }),
  NODE_ENV: custom({
    group: 'service',
    help: 'production refuses development defaults',
    doc: '`production` refuses development defaults (a missing or http `ZEKT_BASE_URL`, a placeholder `ZEKT_SECRET`) and refuses to start with an App key or id GitHub refuses',
    shown: 'development',
    // Anything but production or test is development: tools set NODE_ENV to words of their own.
    read: (raw): (typeof MODES)[number] => MODES.find((m) => m === raw) ?? 'development',
  }),
} satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;

/** Each setting's value as read: the types `Config` is built from. */
export type SettingValues = { [N in SettingName]: ReturnType<(typeof SETTINGS)[N]['read']> };

/** The GitHub App's settings: none at all is a choice (the App registered through setup, or setup mode). */
export const APP_SETTING_NAMES = [
  'GITHUB_APP_ID',
  'GITHUB_PRIVATE_KEY',
  'GITHUB_PRIVATE_KEY_PATH',
  'GITHUB_WEBHOOK_SECRET',
  'GITHUB_CLIENT_ID',
  'GITHUB_CLIENT_SECRET',
] as const satisfies readonly SettingName[];

/** What commands that touch the store alone (`zekt migrate`, `zekt token create`) read. */
export const STORE_SETTING_NAMES = [
  'DATABASE_URL',
  'ZEKT_DATABASE_PREPARED_STATEMENTS',
  'ZEKT_DATA_DIR',
] as const satisfies readonly SettingName[];

function hasUserinfo(value: string): boolean {
  const parsed = new URL(value);
  return parsed.username !== '' || parsed.password !== '';
}

/**
 * `ZEKT_TRUST_PROXY`: unset or `false` believes no proxy (the socket's address is the client);
 * `true` believes every hop; anything else is a comma-separated list of the proxies' addresses or
 * CIDR ranges — Fastify's `trustProxy`.
 */
function readTrustProxy(raw: string | undefined, name: string, problems: string[]): boolean | string[] {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  const addresses = raw.split(',').map((part) => part.trim());
  if (addresses.some((a) => !/^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(a))) {
    problems.push(
      `${name} must be true, false, or proxy addresses such as 10.0.0.1,10.1.0.0/16 (got ${JSON.stringify(raw)})`,
    );
    return false;
  }
  return addresses;
}
