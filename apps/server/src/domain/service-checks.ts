import { SECOND_MS } from './duration.js';

/**
 * What `zekt doctor`, the start-up checks of `zekt serve` and the console's Settings conclude from
 * what they saw: each check passed, failed (with the fix, naming the setting), or was skipped
 * (with what it waits for). The adapters (startup/) gather the facts; this file judges them, so
 * the three places say the same words.
 */

export const CHECK_IDS = [
  'configuration',
  'database',
  'app',
  'clock',
  'webhooks',
  'installations',
  'oidc',
  'alerts',
] as const;
export type CheckId = (typeof CHECK_IDS)[number];
export type CheckStatus = 'passed' | 'failed' | 'skipped';

export interface CheckResult {
  id: CheckId;
  title: string;
  status: CheckStatus;
  /** What the check found, in one sentence. */
  summary: string;
  /** What to do about a failure; null when there is nothing to do. */
  fix: string | null;
}

export const CHECK_TITLES: Record<CheckId, string> = {
  configuration: 'Configuration',
  database: 'Database',
  app: 'GitHub App credentials',
  clock: 'Clock',
  webhooks: 'Webhook deliveries',
  installations: 'Installations',
  oidc: 'Actions OIDC issuer',
  alerts: 'Alert URL',
};

/**
 * OIDC tokens are verified with 30 s of tolerance (github/oidc-verifier.ts) and GitHub refuses App
 * tokens issued more than 60 s in the future: a clock further off than this from GitHub's fails
 * messages, or would once the App's token correction is gone.
 */
export const MAX_CLOCK_SKEW_MS = 30 * SECOND_MS;

/** Where the App credentials come from: the environment wins over the ones stored at setup. */
export type CredentialSource = 'environment' | 'store';

/** An answer from an HTTP endpoint, or why none came. */
export type ProbeAnswer =
  | { kind: 'answered'; status: number; body: unknown }
  | { kind: 'unreachable'; reason: string };

/** GitHub's answer to a call made with the App's token, or why the call could not be made. */
export type AppAnswer = ProbeAnswer | { kind: 'unsignable'; reason: string };

/** A delivery of the App webhook as `GET /app/hook/deliveries` lists it. */
export interface WebhookDeliveryFact {
  id: number;
  deliveredAt: string;
  /** 0 when GitHub got no answer. */
  statusCode: number;
  /** GitHub's words: `OK`, `Invalid HTTP Response: 401`, `failed to connect`, `timed out`. */
  status: string;
  event: string;
  installationId: number | null;
}

export interface InstallationFact {
  installationId: number;
  login: string;
}

/** Everything the checks look at, gathered once (and cached by the server for a short while). */
export interface ServiceFacts {
  checkedAt: number;
  configuration: { problems: string[] };
  database:
    | { kind: 'reached'; description: string; pendingMigrations: string[] }
    | { kind: 'failed'; summary: string; fix: string }
    | { kind: 'skipped'; reason: string };
  app:
    | { kind: 'skipped'; reason: string }
    | { kind: 'setup_required'; setupUrl: string }
    | {
        kind: 'asked';
        appId: number;
        source: CredentialSource;
        apiUrl: string;
        answer: AppAnswer;
        /** GitHub's clock minus this machine's, from the answer's `Date` header. */
        skewMs: number | null;
      };
  webhooks:
    | { kind: 'skipped' }
    | { kind: 'listed'; deliveries: WebhookDeliveryFact[]; failedUrl: string | null }
    | { kind: 'failed'; answer: AppAnswer };
  installations:
    | { kind: 'skipped' }
    | {
        kind: 'listed';
        onGitHub: InstallationFact[];
        /** Installations the store records as live; null when the store could not be read. */
        knownToZekt: InstallationFact[] | null;
        installUrl: string | null;
      }
    | { kind: 'failed'; answer: AppAnswer };
  oidc:
    | { kind: 'skipped' }
    | { kind: 'probed'; issuer: string; discovery: ProbeAnswer; jwks: ProbeAnswer | null };
  alerts: { kind: 'skipped' } | { kind: 'unset' } | { kind: 'probed'; origin: string; answer: ProbeAnswer };
  /** Where GitHub must post the App's webhooks (`<ZEKT_BASE_URL>/webhooks/github`). */
  webhookUrl: string;
}

/** Who reads the checks: the operator sees every installation, a member only their accounts'. */
export type CheckScope = { kind: 'operator' } | { kind: 'member'; installationIds: number[] };

/**
 * The checks in order.
 * @example judgeServiceChecks(facts, { kind: 'operator' }).some((c) => c.status === 'failed')
 */
export function judgeServiceChecks(facts: ServiceFacts, scope: CheckScope): CheckResult[] {
  const inScope = (installationId: number | null) =>
    scope.kind === 'operator' || (installationId !== null && scope.installationIds.includes(installationId));
  return [
    judgeConfiguration(facts.configuration.problems),
    judgeDatabase(facts.database),
    judgeAppFacts(facts.app),
    judgeClockFacts(facts.app),
    judgeWebhooks(facts, inScope),
    judgeInstallations(facts.installations, inScope, scope.kind === 'operator'),
    judgeOidc(facts.oidc),
    judgeAlerts(facts.alerts),
  ];
}

export function anyFailed(checks: CheckResult[]): boolean {
  return checks.some((check) => check.status === 'failed');
}

function result(id: CheckId, status: CheckStatus, summary: string, fix: string | null = null): CheckResult {
  return { id, title: CHECK_TITLES[id], status, summary, fix };
}

function skipped(id: CheckId, reason: string): CheckResult {
  return result(id, 'skipped', reason);
}

export function judgeConfiguration(problems: string[]): CheckResult {
  if (problems.length === 0) return result('configuration', 'passed', 'every setting is valid');
  return result(
    'configuration',
    'failed',
    `${problems.length} setting${problems.length === 1 ? ' is' : 's are'} missing or invalid: ${problems.join('; ')}`,
    'set them in the environment (zekt serve --help lists every setting), then run zekt doctor again',
  );
}

function judgeDatabase(fact: ServiceFacts['database']): CheckResult {
  if (fact.kind === 'skipped') return skipped('database', fact.reason);
  if (fact.kind === 'failed') return result('database', 'failed', fact.summary, fact.fix);
  if (fact.pendingMigrations.length > 0) {
    return result(
      'database',
      'failed',
      `${fact.description} answers, but ${fact.pendingMigrations.length} migration${fact.pendingMigrations.length === 1 ? ' is' : 's are'} not applied (${fact.pendingMigrations.join(', ')})`,
      'run zekt migrate (zekt serve migrates too, when it starts)',
    );
  }
  return result('database', 'passed', `${fact.description} answers and is migrated`);
}

/** GitHub's words when the JWT's times are off, not its key (the clock, not the settings). */
const TIME_CLAIM_MESSAGE = /'(Expiration time|Issued at)' claim/;

/** The message of GitHub's error body (`{ message }`), if any. */
export function gitHubMessage(body: unknown): string | null {
  const message = (body as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : null;
}

/**
 * How an answer to the App's token counts at start-up: `refused` is the operator's mistake (the
 * key or id GitHub refuses, a key that cannot sign), `unavailable` is GitHub's or the network's
 * (a refusal to start would not help), `accepted` is the App answering.
 */
export type AppVerdict = 'accepted' | 'refused' | 'unavailable';

export function appVerdict(answer: AppAnswer): AppVerdict {
  if (answer.kind === 'unsignable') return 'refused';
  if (answer.kind === 'unreachable') return 'unavailable';
  if (answer.status >= 200 && answer.status < 300) return 'accepted';
  if (answer.status === 401 && TIME_CLAIM_MESSAGE.test(gitHubMessage(answer.body) ?? ''))
    return 'unavailable';
  if (answer.status === 401 || answer.status === 403 || answer.status === 404) return 'refused';
  return 'unavailable';
}

/** The names an operator knows the credentials by, from where they come. */
function settingNames(source: CredentialSource) {
  return source === 'environment'
    ? { id: 'GITHUB_APP_ID', key: 'GITHUB_PRIVATE_KEY' }
    : { id: 'the App id stored at setup', key: 'the private key stored at setup' };
}

/**
 * The App check: what GitHub's answer to `GET /app` says about the App id and private key.
 * @example judgeApp({ kind: 'answered', status: 404, body: { message: 'Integration not found' } }, 12, 'environment', url)
 */
export function judgeApp(answer: AppAnswer, appId: number, source: CredentialSource, apiUrl: string) {
  const names = settingNames(source);
  const storedFix =
    source === 'store'
      ? ' (settings in the environment win over the stored ones: set GITHUB_APP_ID and GITHUB_PRIVATE_KEY to override them)'
      : '';
  if (answer.kind === 'unsignable') {
    return result(
      'app',
      'failed',
      `${names.key} is not a usable RSA private key: ${answer.reason}`,
      `give the .pem file GitHub generated on the App's settings page (GITHUB_PRIVATE_KEY, or its path in GITHUB_PRIVATE_KEY_PATH)${storedFix}`,
    );
  }
  if (answer.kind === 'unreachable') {
    return result(
      'app',
      'failed',
      `cannot reach GitHub at ${apiUrl}: ${answer.reason}`,
      'check GITHUB_API_URL, DNS, the firewall and any proxy between Zekt and GitHub; Zekt keeps trying',
    );
  }
  const message = gitHubMessage(answer.body);
  const quoted = message === null ? `HTTP ${answer.status}` : `${answer.status} "${message}"`;
  if (answer.status >= 200 && answer.status < 300) {
    const name = (answer.body as { name?: unknown } | null)?.name;
    return result(
      'app',
      'passed',
      `GitHub accepts App ${appId}${typeof name === 'string' ? ` (${name})` : ''} and its key${source === 'store' ? ', stored at setup' : ''}`,
    );
  }
  if (answer.status === 404) {
    return result(
      'app',
      'failed',
      `GitHub knows no App ${appId}: ${names.id} is wrong (GitHub answered ${quoted})`,
      `set GITHUB_APP_ID to the App ID on the App's settings page on GitHub${storedFix}`,
    );
  }
  if (answer.status === 401 && TIME_CLAIM_MESSAGE.test(message ?? '')) {
    return result(
      'app',
      'failed',
      `GitHub refuses the App token's times (${quoted}): this machine's clock is off`,
      'synchronise the clock (NTP: timedatectl set-ntp true)',
    );
  }
  if (answer.status === 401 || answer.status === 403) {
    return result(
      'app',
      'failed',
      `GitHub refuses the App's key: ${names.key} is not a private key of App ${appId} (${names.id}; GitHub answered ${quoted})`,
      `generate a private key on the App's settings page on GitHub and set GITHUB_PRIVATE_KEY (or GITHUB_PRIVATE_KEY_PATH) to it, or correct GITHUB_APP_ID if the key belongs to another App${storedFix}`,
    );
  }
  return result(
    'app',
    'failed',
    `GitHub answered ${quoted} at ${apiUrl}`,
    'GitHub is having trouble, or GITHUB_API_URL is not GitHub’s REST API; Zekt keeps trying',
  );
}

function judgeAppFacts(fact: ServiceFacts['app']): CheckResult {
  if (fact.kind === 'skipped') return skipped('app', fact.reason);
  if (fact.kind === 'setup_required') {
    return result(
      'app',
      'failed',
      'setup required: Zekt has no GitHub App yet (no GITHUB_APP_ID and private key, none stored)',
      `register the App from the setup page: ${fact.setupUrl} (the code is printed when zekt serve starts, and by zekt setup)`,
    );
  }
  return judgeApp(fact.answer, fact.appId, fact.source, fact.apiUrl);
}

function judgeClockFacts(fact: ServiceFacts['app']): CheckResult {
  if (fact.kind !== 'asked') return skipped('clock', 'needs the App credentials');
  if (fact.skewMs === null) {
    return skipped(
      'clock',
      fact.answer.kind === 'answered' ? "GitHub's answer carried no Date header" : 'GitHub did not answer',
    );
  }
  return judgeClock(fact.skewMs);
}

/**
 * `skewMs` is GitHub's clock minus this machine's.
 * @example judgeClock(-95_000).summary // "this machine's clock is 95 s ahead of GitHub's (its Date header)"
 */
export function judgeClock(skewMs: number): CheckResult {
  const seconds = Math.round(Math.abs(skewMs) / SECOND_MS);
  const where = skewMs > 0 ? 'behind' : 'ahead of';
  if (Math.abs(skewMs) <= MAX_CLOCK_SKEW_MS) {
    return result('clock', 'passed', `within ${Math.max(seconds, 1)} s of GitHub's (its Date header)`);
  }
  return result(
    'clock',
    'failed',
    `this machine's clock is ${seconds} s ${where} GitHub's (its Date header)`,
    `synchronise it (NTP: timedatectl set-ntp true): Zekt accepts Actions OIDC tokens only ${MAX_CLOCK_SKEW_MS / SECOND_MS} s off, and GitHub refuses App tokens more than 60 s off`,
  );
}

/**
 * What the newest delivery of the App webhook says about the way from GitHub to Zekt. GitHub
 * records the HTTP status Zekt (or whatever answered at the URL) gave, or 0 with its words for a
 * delivery that got no answer.
 */
export function explainDeliveryFailure(
  delivery: WebhookDeliveryFact,
  webhookUrl: string,
  failedUrl: string | null,
): { summary: string; fix: string } {
  const url = failedUrl ?? webhookUrl;
  const elsewhere =
    failedUrl !== null && failedUrl !== webhookUrl
      ? ` The App's webhook URL is ${failedUrl}; Zekt receives webhooks at ${webhookUrl}.`
      : '';
  const redeliver = 'then ask GitHub for the failed deliveries again: zekt reconcile';
  const code = delivery.statusCode;
  if (code === 0) {
    return {
      summary: `GitHub cannot reach ${url} (${delivery.status})`,
      fix: `the App's webhook URL must be ${webhookUrl} and reachable from GitHub: DNS, firewall, TLS certificate, reverse proxy.${elsewhere} ${redeliver}`,
    };
  }
  if (code === 401) {
    return {
      summary: 'GitHub gets 401 from you: the webhook secret differs',
      fix: `set GITHUB_WEBHOOK_SECRET to the webhook secret of the App's settings on GitHub (or set the App's secret to Zekt's), ${redeliver}`,
    };
  }
  if (code >= 300 && code < 400) {
    return {
      summary: `GitHub gets a redirect (${code}) from ${url}, and GitHub does not follow redirects`,
      fix: `set the App's webhook URL to ${webhookUrl} exactly (https, no redirect), ${redeliver}`,
    };
  }
  if (code === 404 || code === 405) {
    return {
      summary: `GitHub gets ${code} from ${url}: nothing there receives webhooks`,
      fix: `set the App's webhook URL to ${webhookUrl}.${elsewhere} ${redeliver}`,
    };
  }
  if (code === 415) {
    return {
      summary: 'GitHub gets 415 from you: the App webhook sends form data',
      fix: `set the webhook's content type to application/json in the App's settings, ${redeliver}`,
    };
  }
  if (code === 503) {
    return {
      summary: 'GitHub gets 503 from you: Zekt was not ready (database unreachable, or setup not done)',
      fix: `look at ${new URL(webhookUrl).origin}/readyz and Zekt's log, ${redeliver}`,
    };
  }
  return {
    summary: `GitHub gets ${code} from ${url} (${delivery.status})`,
    fix: `look for the delivery in Zekt's log and in any proxy before it, ${redeliver}`,
  };
}

function judgeWebhooks(
  facts: ServiceFacts,
  inScope: (installationId: number | null) => boolean,
): CheckResult {
  const fact = facts.webhooks;
  if (fact.kind === 'skipped') return skipped('webhooks', 'needs the App credentials GitHub accepts');
  if (fact.kind === 'failed') {
    const message =
      fact.answer.kind === 'answered'
        ? `GitHub answered ${fact.answer.status}${gitHubMessage(fact.answer.body) ? ` "${gitHubMessage(fact.answer.body)}"` : ''}`
        : fact.answer.reason;
    return result(
      'webhooks',
      'failed',
      `cannot list the App webhook's deliveries: ${message}`,
      'try again; GitHub lists them to the App itself (GET /app/hook/deliveries)',
    );
  }
  const deliveries = fact.deliveries.filter((d) => inScope(d.installationId));
  const newest = deliveries[0];
  if (newest === undefined) {
    return result(
      'webhooks',
      'passed',
      'GitHub lists no delivery of the App webhook in the last 3 days: nothing to judge yet',
    );
  }
  const failed = deliveries.filter((d) => d.statusCode < 200 || d.statusCode >= 300).length;
  if (newest.statusCode >= 200 && newest.statusCode < 300) {
    return result(
      'webhooks',
      'passed',
      `the newest delivery (${newest.event}, ${newest.deliveredAt}) was answered ${newest.statusCode}; ${failed} of the last ${deliveries.length} failed`,
    );
  }
  const { summary, fix } = explainDeliveryFailure(newest, facts.webhookUrl, fact.failedUrl);
  return result(
    'webhooks',
    'failed',
    `${summary} — the newest delivery (${newest.event}, ${newest.deliveredAt}); ${failed} of the last ${deliveries.length} failed`,
    fix,
  );
}

function judgeInstallations(
  fact: ServiceFacts['installations'],
  inScope: (installationId: number | null) => boolean,
  operator: boolean,
): CheckResult {
  if (fact.kind === 'skipped') return skipped('installations', 'needs the App credentials GitHub accepts');
  if (fact.kind === 'failed') {
    const reason =
      fact.answer.kind === 'answered' ? `GitHub answered ${fact.answer.status}` : fact.answer.reason;
    return result('installations', 'failed', `cannot list the App's installations: ${reason}`, 'try again');
  }
  const onGitHub = fact.onGitHub.filter((i) => inScope(i.installationId));
  const install = fact.installUrl === null ? 'on its public page' : `at ${fact.installUrl}`;
  if (onGitHub.length === 0 && operator) {
    return result(
      'installations',
      'failed',
      'the App is installed on no account',
      `install it on the accounts whose repositories provide or consume events: ${install}`,
    );
  }
  const logins = (list: InstallationFact[]) => list.map((i) => i.login).join(', ');
  if (fact.knownToZekt !== null) {
    const known = fact.knownToZekt.filter((i) => inScope(i.installationId));
    const knownIds = new Set(known.map((i) => i.installationId));
    const gitHubIds = new Set(onGitHub.map((i) => i.installationId));
    const unrecorded = onGitHub.filter((i) => !knownIds.has(i.installationId));
    const gone = known.filter((i) => !gitHubIds.has(i.installationId));
    if (unrecorded.length > 0) {
      return result(
        'installations',
        'failed',
        `GitHub lists installations Zekt has not recorded (${logins(unrecorded)}): their installation webhook did not reach Zekt`,
        'fix the webhook deliveries (above), then run zekt reconcile: GitHub sends the missed installation webhooks again',
      );
    }
    if (gone.length > 0) {
      return result(
        'installations',
        'failed',
        `Zekt records installations GitHub no longer lists (${logins(gone)}): the App was uninstalled or suspended there and the webhook did not reach Zekt`,
        'fix the webhook deliveries (above), then run zekt reconcile; or install the App on the account again',
      );
    }
  }
  if (onGitHub.length === 0) {
    return result('installations', 'passed', 'none of your accounts has the App installed');
  }
  return result(
    'installations',
    'passed',
    `${onGitHub.length} installation${onGitHub.length === 1 ? '' : 's'}: ${logins(onGitHub)}`,
  );
}

function judgeOidc(fact: ServiceFacts['oidc']): CheckResult {
  if (fact.kind === 'skipped') return skipped('oidc', 'needs a valid ZEKT_OIDC_ISSUER');
  const discoveryUrl = `${fact.issuer}/.well-known/openid-configuration`;
  const fix =
    'ZEKT_OIDC_ISSUER must be the issuer of GitHub Actions OIDC tokens: https://token.actions.githubusercontent.com on github.com, https://<host>/_services/token on GitHub Enterprise Server';
  if (fact.discovery.kind === 'unreachable') {
    return result('oidc', 'failed', `cannot reach ${discoveryUrl}: ${fact.discovery.reason}`, fix);
  }
  if (fact.discovery.status !== 200) {
    return result('oidc', 'failed', `${discoveryUrl} answered ${fact.discovery.status}`, fix);
  }
  const issuer = (fact.discovery.body as { issuer?: unknown } | null)?.issuer;
  if (issuer !== fact.issuer) {
    return result(
      'oidc',
      'failed',
      `${discoveryUrl} names the issuer ${JSON.stringify(issuer ?? null)}, not ${fact.issuer}: tokens would be refused`,
      fix,
    );
  }
  if (fact.jwks === null) {
    return result('oidc', 'failed', `${discoveryUrl} names no jwks_uri`, fix);
  }
  if (fact.jwks.kind === 'unreachable') {
    return result('oidc', 'failed', `cannot read the issuer's keys: ${fact.jwks.reason}`, fix);
  }
  const keys = (fact.jwks.body as { keys?: unknown } | null)?.keys;
  if (fact.jwks.status !== 200 || !Array.isArray(keys) || keys.length === 0) {
    return result(
      'oidc',
      'failed',
      `the issuer's key set answered ${fact.jwks.status} with ${Array.isArray(keys) ? keys.length : 'no'} keys`,
      fix,
    );
  }
  return result(
    'oidc',
    'passed',
    `${fact.issuer} publishes its discovery document and ${keys.length} signing key${keys.length === 1 ? '' : 's'}`,
  );
}

/**
 * The alert URL is probed with `HEAD` (no body, no signature): any answer but "not found" or a
 * server error shows a receiver is there. A fake alert would land in the operator's pager.
 */
function judgeAlerts(fact: ServiceFacts['alerts']): CheckResult {
  if (fact.kind === 'skipped') return skipped('alerts', 'needs a valid ZEKT_ALERT_URL');
  if (fact.kind === 'unset') {
    return result('alerts', 'passed', 'ZEKT_ALERT_URL is not set: alerts are only listed in the console');
  }
  const fix = 'check ZEKT_ALERT_URL, and that the receiver runs and is reachable from Zekt';
  if (fact.answer.kind === 'unreachable') {
    return result('alerts', 'failed', `cannot reach ${fact.origin}: ${fact.answer.reason}`, fix);
  }
  const status = fact.answer.status;
  if (status === 404 || status === 410 || status >= 500) {
    return result(
      'alerts',
      'failed',
      `the receiver at ${fact.origin} answered HEAD with ${status}`,
      status >= 500 ? fix : 'check the path of ZEKT_ALERT_URL',
    );
  }
  return result('alerts', 'passed', `the receiver at ${fact.origin} answers (HEAD: ${status})`);
}
