import { describe, expect, it } from 'vitest';
import { tokenExpiry } from './api-tokens.js';
import { DAY_MS } from './duration.js';
import {
  appVerdict,
  judgeApp,
  judgeClock,
  judgeServiceChecks,
  type ServiceFacts,
  type WebhookDeliveryFact,
} from './service-checks.js';

const WEBHOOK_URL = 'https://zekt.example.com/webhooks/github';
const API = 'https://api.github.com';

/** Facts where every check passes; each test breaks one. */
function healthy(): ServiceFacts {
  return {
    checkedAt: 0,
    configuration: { problems: [] },
    database: { kind: 'reached', description: 'the embedded store /data/zekt.db', pendingMigrations: [] },
    app: {
      kind: 'asked',
      appId: 12,
      source: 'environment',
      apiUrl: API,
      answer: { kind: 'answered', status: 200, body: { name: 'Zekt' } },
      skewMs: 400,
    },
    webhooks: { kind: 'listed', deliveries: [delivery(200, 'OK', 1)], failedUrl: null },
    installations: {
      kind: 'listed',
      onGitHub: [
        { installationId: 1, login: 'acme' },
        { installationId: 2, login: 'globex' },
      ],
      knownToZekt: [
        { installationId: 1, login: 'acme' },
        { installationId: 2, login: 'globex' },
      ],
      installUrl: 'https://github.com/apps/zekt/installations/new',
    },
    oidc: {
      kind: 'probed',
      issuer: 'https://token.actions.githubusercontent.com',
      discovery: {
        kind: 'answered',
        status: 200,
        body: { issuer: 'https://token.actions.githubusercontent.com', jwks_uri: 'x' },
      },
      jwks: { kind: 'answered', status: 200, body: { keys: [{ kty: 'RSA' }] } },
    },
    alerts: { kind: 'unset' },
    webhookUrl: WEBHOOK_URL,
  };
}

function delivery(statusCode: number, status: string, installationId: number | null): WebhookDeliveryFact {
  return {
    id: 9,
    deliveredAt: '2026-11-20T10:00:00Z',
    statusCode,
    status,
    event: 'installation',
    installationId,
  };
}

const operator = { kind: 'operator' } as const;
const byId = (facts: ServiceFacts, scope: Parameters<typeof judgeServiceChecks>[1] = operator) =>
  Object.fromEntries(judgeServiceChecks(facts, scope).map((check) => [check.id, check]));

/** The App check of App 12 when GitHub answered GET /app with `status` and `message`. */
const appAnswered = (status: number, message: string, source: 'environment' | 'store' = 'environment') =>
  judgeApp({ kind: 'answered', status, body: { message } }, 12, source, API);

describe('service checks', () => {
  it('pass on a healthy service, in the order zekt doctor prints them', () => {
    const checks = judgeServiceChecks(healthy(), operator);
    expect(checks.map((c) => c.id)).toEqual([
      'configuration',
      'database',
      'app',
      'clock',
      'webhooks',
      'installations',
      'oidc',
      'alerts',
    ]);
    expect(checks.filter((c) => c.status !== 'passed')).toEqual([]);
  });

  it('name GITHUB_PRIVATE_KEY for a key GitHub cannot decode and GITHUB_APP_ID for an unknown App', () => {
    const key = appAnswered(401, 'A JSON web token could not be decoded');
    expect(key.status).toBe('failed');
    expect(key.summary).toContain('GITHUB_PRIVATE_KEY is not a private key of App 12');
    expect(key.summary).toContain('A JSON web token could not be decoded');
    const id = appAnswered(404, 'Integration not found');
    expect(id.summary).toContain('GITHUB_APP_ID is wrong');
    expect(id.fix).toContain('App ID');
    expect(appVerdict({ kind: 'answered', status: 401, body: {} })).toBe('refused');
    expect(appVerdict({ kind: 'answered', status: 404, body: {} })).toBe('refused');
    expect(appVerdict({ kind: 'unsignable', reason: 'bad PEM' })).toBe('refused');
  });

  it('tell credentials stored at setup from the environment’s, and say what overrides them', () => {
    const stored = appAnswered(401, 'A JSON web token could not be decoded', 'store');
    expect(stored.summary).toContain('the private key stored at setup');
    expect(stored.fix).toContain('settings in the environment win over the stored ones');
  });

  it('count GitHub not answering, its outages and a clock the token times betray as unavailable, not refused', () => {
    expect(appVerdict({ kind: 'unreachable', reason: 'ECONNREFUSED' })).toBe('unavailable');
    expect(appVerdict({ kind: 'answered', status: 502, body: {} })).toBe('unavailable');
    expect(appVerdict({ kind: 'answered', status: 429, body: {} })).toBe('unavailable');
    const times = {
      kind: 'answered' as const,
      status: 401,
      body: {
        message:
          "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
      },
    };
    expect(appVerdict(times)).toBe('unavailable');
    expect(judgeApp(times, 12, 'environment', API).fix).toContain('NTP');
  });

  it('say setup is required, with the setup URL, when there are no App credentials', () => {
    const facts = healthy();
    facts.app = { kind: 'setup_required', setupUrl: 'https://zekt.example.com/setup' };
    facts.webhooks = { kind: 'skipped' };
    facts.installations = { kind: 'skipped' };
    const checks = byId(facts);
    expect(checks.app).toMatchObject({ status: 'failed' });
    expect(checks.app?.summary).toContain('setup required');
    expect(checks.app?.fix).toContain('https://zekt.example.com/setup');
    expect(checks.clock?.status).toBe('skipped');
    expect(checks.webhooks?.status).toBe('skipped');
  });

  it('fail a clock more than 30 s from GitHub’s, saying which way', () => {
    expect(judgeClock(29_000).status).toBe('passed');
    expect(judgeClock(95_000)).toMatchObject({
      status: 'failed',
      summary: "this machine's clock is 95 s behind GitHub's (its Date header)",
    });
    expect(judgeClock(-31_000).summary).toContain('31 s ahead of');
  });

  it('map the newest App webhook delivery’s status to what is wrong between GitHub and Zekt', () => {
    const newest = (statusCode: number, status: string, failedUrl: string | null = null) => {
      const facts = healthy();
      facts.webhooks = {
        kind: 'listed',
        deliveries: [delivery(statusCode, status, 1), delivery(200, 'OK', 1)],
        failedUrl,
      };
      return byId(facts).webhooks;
    };
    expect(newest(401, 'Invalid HTTP Response: 401')?.summary).toContain(
      'GitHub gets 401 from you: the webhook secret differs',
    );
    expect(newest(401, 'Invalid HTTP Response: 401')?.fix).toContain('GITHUB_WEBHOOK_SECRET');
    const unreachable = newest(0, 'failed to connect', 'https://old.example.com/hooks');
    expect(unreachable?.summary).toContain(
      'GitHub cannot reach https://old.example.com/hooks (failed to connect)',
    );
    expect(unreachable?.fix).toContain(`Zekt receives webhooks at ${WEBHOOK_URL}`);
    expect(newest(0, 'timed out')?.summary).toContain(`GitHub cannot reach ${WEBHOOK_URL} (timed out)`);
    expect(newest(404, 'Invalid HTTP Response: 404')?.fix).toContain(
      `set the App's webhook URL to ${WEBHOOK_URL}`,
    );
    expect(newest(301, 'Invalid HTTP Response: 301')?.summary).toContain('does not follow redirects');
    expect(newest(415, 'Invalid HTTP Response: 415')?.fix).toContain('application/json');
    expect(newest(503, 'Invalid HTTP Response: 503')?.fix).toContain('https://zekt.example.com/readyz');
    expect(newest(500, 'Invalid HTTP Response: 500')?.summary).toContain('GitHub gets 500');
    for (const code of [401, 0, 404, 301, 415, 503, 500]) {
      expect(newest(code, 'x')?.status).toBe('failed');
      expect(newest(code, 'x')?.summary).toContain('1 of the last 2 failed');
    }
    // An earlier failure with a later success: the way is open again.
    const facts = healthy();
    facts.webhooks = {
      kind: 'listed',
      deliveries: [delivery(202, 'OK', 1), delivery(401, 'Invalid HTTP Response: 401', 1)],
      failedUrl: null,
    };
    expect(byId(facts).webhooks).toMatchObject({ status: 'passed' });
  });

  it('show a member only the deliveries and installations of their accounts', () => {
    const facts = healthy();
    facts.webhooks = {
      kind: 'listed',
      deliveries: [delivery(401, 'Invalid HTTP Response: 401', 2), delivery(200, 'OK', 1)],
      failedUrl: null,
    };
    facts.installations = {
      kind: 'listed',
      onGitHub: [
        { installationId: 1, login: 'acme' },
        { installationId: 2, login: 'globex' },
        { installationId: 3, login: 'initech' },
      ],
      knownToZekt: [
        { installationId: 1, login: 'acme' },
        { installationId: 2, login: 'globex' },
      ],
      installUrl: null,
    };
    const acme = byId(facts, { kind: 'member', installationIds: [1] });
    expect(acme.webhooks?.status).toBe('passed');
    expect(acme.installations).toMatchObject({ status: 'passed', summary: '1 installation: acme' });
    expect(JSON.stringify(acme)).not.toContain('globex');
    expect(JSON.stringify(acme)).not.toContain('initech');
    const all = byId(facts);
    expect(all.webhooks?.status).toBe('failed');
    expect(all.installations?.summary).toContain(
      'GitHub lists installations Zekt has not recorded (initech)',
    );
    expect(all.installations?.fix).toContain('zekt reconcile');
  });

  it('fail an App installed nowhere, and installations GitHub no longer lists', () => {
    const none = healthy();
    none.installations = {
      kind: 'listed',
      onGitHub: [],
      knownToZekt: [],
      installUrl: 'https://github.com/apps/zekt/installations/new',
    };
    expect(byId(none).installations).toMatchObject({
      status: 'failed',
      fix: expect.stringContaining('https://github.com/apps/zekt/installations/new'),
    });
    const gone = healthy();
    gone.installations = {
      kind: 'listed',
      onGitHub: [{ installationId: 1, login: 'acme' }],
      knownToZekt: [
        { installationId: 1, login: 'acme' },
        { installationId: 2, login: 'globex' },
      ],
      installUrl: null,
    };
    expect(byId(gone).installations?.summary).toContain('no longer lists (globex)');
  });

  it('skip what needs the configuration when it is invalid, and report every problem', () => {
    const facts = healthy();
    facts.configuration = { problems: ['ZEKT_SECRET is required', 'GITHUB_APP_ID is required'] };
    facts.app = { kind: 'skipped', reason: 'needs a valid configuration' };
    facts.webhooks = { kind: 'skipped' };
    facts.installations = { kind: 'skipped' };
    facts.oidc = { kind: 'skipped' };
    facts.alerts = { kind: 'skipped' };
    const checks = byId(facts);
    expect(checks.configuration?.summary).toContain('2 settings are missing or invalid');
    expect(checks.configuration?.summary).toContain('ZEKT_SECRET is required; GITHUB_APP_ID is required');
    for (const id of ['app', 'clock', 'webhooks', 'installations', 'oidc', 'alerts']) {
      expect(checks[id]?.status).toBe('skipped');
    }
  });

  it('fail pending migrations with zekt migrate as the fix', () => {
    const facts = healthy();
    facts.database = {
      kind: 'reached',
      description: 'the embedded store x',
      pendingMigrations: ['0013-token-expiry'],
    };
    expect(byId(facts).database).toMatchObject({
      status: 'failed',
      fix: expect.stringContaining('zekt migrate'),
    });
  });

  it('fail an issuer whose discovery names another issuer or publishes no keys', () => {
    const other = healthy();
    other.oidc = {
      kind: 'probed',
      issuer: 'https://ghe.example.com/_services/token',
      discovery: { kind: 'answered', status: 200, body: { issuer: 'https://elsewhere', jwks_uri: 'x' } },
      jwks: { kind: 'answered', status: 200, body: { keys: [{}] } },
    };
    expect(byId(other).oidc?.summary).toContain('names the issuer "https://elsewhere"');
    const keyless = healthy();
    if (keyless.oidc.kind === 'probed')
      keyless.oidc.jwks = { kind: 'answered', status: 200, body: { keys: [] } };
    expect(byId(keyless).oidc?.status).toBe('failed');
  });

  it('judge the alert URL from a HEAD: a receiver that answers passes, not found and server errors fail', () => {
    const probed = (status: number) => {
      const facts = healthy();
      facts.alerts = {
        kind: 'probed',
        origin: 'https://hooks.example.com',
        answer: { kind: 'answered', status, body: '' },
      };
      return byId(facts).alerts?.status;
    };
    expect(probed(405)).toBe('passed');
    expect(probed(401)).toBe('passed');
    expect(probed(404)).toBe('failed');
    expect(probed(502)).toBe('failed');
  });
});

describe('API token expiry', () => {
  const now = Date.UTC(2026, 10, 20);
  it('accepts a time in the future up to 366 days ahead', () => {
    expect(tokenExpiry('2027-01-01T00:00:00Z', now)).toMatchObject({
      ok: true,
      expiresAtMs: Date.UTC(2027, 0, 1),
    });
    expect(tokenExpiry(new Date(now + 366 * DAY_MS).toISOString(), now).ok).toBe(true);
  });
  it('refuses the past, more than 366 days and anything that is not an ISO 8601 time', () => {
    expect(tokenExpiry('2026-11-19T00:00:00Z', now)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('past'),
    });
    expect(tokenExpiry(new Date(now + 367 * DAY_MS).toISOString(), now)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('366 days'),
    });
    for (const bad of ['tomorrow', '1767225600000', '2027-01-01', '2027-13-01T00:00:00Z']) {
      expect(tokenExpiry(bad, now).ok).toBe(false);
    }
  });
});
