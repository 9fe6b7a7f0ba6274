import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTING_GROUPS } from './config/setting.js';
import { DOCUMENTED_SETTINGS, settingsHelp, withSettingsTables } from './config/settings-doc.js';
import { ConfigError, githubWebUrlFor, loadConfig } from './config.js';

const PEM = '-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n';
const complete = {
  GITHUB_APP_ID: '1001',
  GITHUB_PRIVATE_KEY: PEM,
  GITHUB_WEBHOOK_SECRET: 'whsec',
  ZEKT_SECRET: 'f'.repeat(64),
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env, { cwd: '/srv/zekt' });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('configuration', () => {
  it('applies documented defaults', () => {
    const config = loadConfig(complete, { cwd: '/srv/zekt' });
    expect(config.port).toBe(3000);
    expect(config.baseUrl).toBe('http://localhost:3000');
    expect(config.database).toEqual({ kind: 'sqlite', path: '/srv/zekt/.zekt/zekt.db' });
    expect(config.github.apiUrl).toBe('https://api.github.com');
    expect(config.oidc).toEqual({
      issuer: 'https://token.actions.githubusercontent.com',
      audience: 'api://zekt',
    });
    expect(config.installationDispatchRate).toBe(80);
    expect(config.messageGraceMs).toBe(0);
  });

  it('reports every problem at once, naming the variable', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'mysql://x',
      GITHUB_CLIENT_ID: 'Iv1.abc',
      GITHUB_CLIENT_SECRET: 'secret',
    });
    expect(problems.some((p) => p.startsWith('PORT'))).toBe(true);
    expect(problems.some((p) => p.startsWith('GITHUB_APP_ID is required'))).toBe(true);
    expect(problems.some((p) => p.includes('GITHUB_PRIVATE_KEY'))).toBe(true);
    expect(problems.some((p) => p.startsWith('GITHUB_WEBHOOK_SECRET'))).toBe(true);
    expect(problems.some((p) => p.startsWith('ZEKT_SECRET'))).toBe(true);
    expect(problems.some((p) => p.startsWith('LOG_LEVEL'))).toBe(true);
    expect(problems.some((p) => p.startsWith('DATABASE_URL'))).toBe(true);
    expect(problems.length).toBe(7);
  });

  it('leaves the App out without any of its settings (registered through setup, or setup mode)', () => {
    const config = loadConfig({ ZEKT_SECRET: 'f'.repeat(64) }, { cwd: '/srv/zekt' });
    expect(config.github.app).toBeNull();
    expect(config.github.webUrl).toBe('https://github.com');
    expect(loadConfig(complete).github.app).toEqual({
      appId: 1001,
      privateKey: PEM.trim(),
      webhookSecret: 'whsec',
      clientId: null,
      clientSecret: null,
    });
    // One of them is a choice for the environment's App: the rest are required then.
    expect(problemsOf({ ZEKT_SECRET: 'f'.repeat(64), GITHUB_WEBHOOK_SECRET: 'whsec' })).toEqual([
      "GITHUB_APP_ID is required with the App's other settings: the App id from the GitHub App's settings page (or unset them all to register the App through setup)",
      "GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH is required: the App's private key (.pem)",
    ]);
    expect(problemsOf({})).toEqual([
      expect.stringMatching(
        /^ZEKT_SECRET is required: .*openssl rand -hex 32.*GitHub App registered through setup/,
      ),
    ]);
  });

  it('refuses development defaults in production', () => {
    const problems = problemsOf({
      ...complete,
      NODE_ENV: 'production',
      ZEKT_SECRET: `development${'x'.repeat(40)}`,
    });
    expect(problems).toEqual([
      'ZEKT_BASE_URL is required in production: the public https URL GitHub and consumers reach Zekt at',
      'ZEKT_SECRET looks like a development placeholder; generate one with openssl rand -hex 32',
    ]);
    expect(problemsOf({ ...complete, NODE_ENV: 'production', ZEKT_BASE_URL: 'http://zekt.example' })).toEqual(
      ['ZEKT_BASE_URL must use https in production: consumer workflows send their tokens to it'],
    );
  });

  it('reads the private key from a file and unescapes \\n in the variable', () => {
    const fromFile = loadConfig(
      { ...complete, GITHUB_PRIVATE_KEY: '', GITHUB_PRIVATE_KEY_PATH: 'key.pem' },
      { cwd: '/srv', readFile: (path) => (path === '/srv/key.pem' ? PEM : '') },
    );
    expect(fromFile.github.app?.privateKey).toBe(PEM);
    const escaped = loadConfig({ ...complete, GITHUB_PRIVATE_KEY: PEM.replace(/\n/g, '\\n') });
    expect(escaped.github.app?.privateKey).toBe(PEM);
    expect(problemsOf({ ...complete, GITHUB_PRIVATE_KEY: 'not a key' })).toEqual([
      'the GitHub App private key must be a PEM file (-----BEGIN RSA PRIVATE KEY-----)',
    ]);
  });

  it('selects PostgreSQL by DATABASE_URL', () => {
    expect(loadConfig({ ...complete, DATABASE_URL: 'postgres://u@h/db' }).database).toEqual({
      kind: 'postgres',
      url: 'postgres://u@h/db',
      preparedStatements: true,
    });
  });

  it('turns prepared statements off for a pooler that cannot keep them, and refuses other values', () => {
    const postgres = { ...complete, DATABASE_URL: 'postgres://u@h/db' };
    expect(loadConfig({ ...postgres, ZEKT_DATABASE_PREPARED_STATEMENTS: 'false' }).database).toMatchObject({
      preparedStatements: false,
    });
    expect(() => loadConfig({ ...postgres, ZEKT_DATABASE_PREPARED_STATEMENTS: 'off' })).toThrow(
      /ZEKT_DATABASE_PREPARED_STATEMENTS must be true or false/,
    );
  });
});

describe('console login settings', () => {
  it("finds GitHub's web root from the REST URL, or takes GITHUB_URL", () => {
    expect(githubWebUrlFor('https://api.github.com')).toBe('https://github.com');
    expect(githubWebUrlFor('https://ghes.example.com/api/v3')).toBe('https://ghes.example.com');
    expect(githubWebUrlFor('http://127.0.0.1:4010/api/v3/')).toBe('http://127.0.0.1:4010');
    expect(githubWebUrlFor('https://api.octo.ghe.com')).toBe('https://octo.ghe.com');
    expect(loadConfig(complete).github.webUrl).toBe('https://github.com');
    expect(loadConfig({ ...complete, GITHUB_URL: 'https://gh.example.com/' }).github.webUrl).toBe(
      'https://gh.example.com',
    );
  });

  it('takes the OAuth client id and secret together or not at all', () => {
    expect(problemsOf({ ...complete, GITHUB_CLIENT_ID: 'Iv23liabc' })).toEqual([
      "GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET go together: both from the App's settings page, or neither (no console login)",
    ]);
    const config = loadConfig({ ...complete, GITHUB_CLIENT_ID: 'Iv23liabc', GITHUB_CLIENT_SECRET: 's' });
    expect(config.github.app).toMatchObject({ clientId: 'Iv23liabc', clientSecret: 's' });
  });

  it('refuses an alert URL with credentials, without quoting them', () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    for (const url of ['https://ops:hunter2@alerts.example/zekt', 'https://ops@alerts.example/zekt']) {
      const problems = problemsOf({ ...complete, ZEKT_ALERT_URL: url, ZEKT_ALERT_SECRET: secret });
      expect(problems).toEqual([
        'ZEKT_ALERT_URL must not hold a user name or password (https://user:pass@host/…): the receiver verifies alerts by their signature (ZEKT_ALERT_SECRET); remove the credentials from the URL',
      ]);
    }
    expect(
      problemsOf({
        ...complete,
        ZEKT_ALERT_URL: 'ftp://ops:hunter2@alerts.example/',
        ZEKT_ALERT_SECRET: secret,
      }),
    ).toEqual(['ZEKT_ALERT_URL must be a http: or https: URL (got "ftp://***@alerts.example/")']);
    expect(
      loadConfig({ ...complete, ZEKT_ALERT_URL: 'https://alerts.example/zekt', ZEKT_ALERT_SECRET: secret })
        .alerts.url,
    ).toBe('https://alerts.example/zekt');
  });

  it('serves metrics on a private port by default; on the API port only when asked, and then with a token', () => {
    expect(loadConfig(complete).metrics).toEqual({
      port: 9464,
      host: '127.0.0.1',
      onApiPort: false,
      token: null,
    });
    expect(
      loadConfig({
        ...complete,
        ZEKT_METRICS_PORT: '0',
        ZEKT_METRICS_HOST: '0.0.0.0',
        ZEKT_METRICS_ON_API_PORT: 'true',
        ZEKT_METRICS_TOKEN: 'a'.repeat(32),
      }).metrics,
    ).toEqual({ port: 0, host: '0.0.0.0', onApiPort: true, token: 'a'.repeat(32) });
    expect(problemsOf({ ...complete, ZEKT_METRICS_PORT: '70000', ZEKT_METRICS_TOKEN: 'short' })).toEqual([
      'ZEKT_METRICS_TOKEN must be at least 16 characters (openssl rand -hex 16): it is all that keeps /metrics from anyone who reaches the port',
      'ZEKT_METRICS_PORT must be a whole number from 0 to 65535 (got "70000")',
    ]);
    expect(problemsOf({ ...complete, ZEKT_METRICS_ON_API_PORT: 'true' })).toEqual([
      'ZEKT_METRICS_ON_API_PORT=true puts /metrics on the public API port: set ZEKT_METRICS_TOKEN too (openssl rand -hex 16), or scrape the private ZEKT_METRICS_PORT instead',
    ]);
    expect(problemsOf({ ...complete, ZEKT_METRICS_ON_API_PORT: 'yes' })).toEqual([
      'ZEKT_METRICS_ON_API_PORT must be true or false (got "yes")',
    ]);
    expect(problemsOf({ ...complete, PORT: '9464' })).toEqual([
      "ZEKT_METRICS_PORT (9464) must differ from PORT: the metrics port is private, the API's is public",
    ]);
  });
});

describe('docs/configuration.md', () => {
  const page = new URL('../../../docs/configuration.md', import.meta.url);

  it('holds the tables the settings are declared in (refresh: vitest run apps/server/src/config.test.ts -u)', async () => {
    const generated = withSettingsTables(readFileSync(page, 'utf8'), SETTING_GROUPS);
    // Whole rows, each setting's default and meaning included, not just its name; -u writes them.
    await expect(generated).toMatchFileSnapshot(page.pathname);
  });

  it('documents every setting `zekt serve --help` lists', () => {
    const doc = readFileSync(page, 'utf8');
    // The first cell of a table row names the variable(s) it documents.
    const documented = doc
      .split('\n')
      .filter((line) => line.startsWith('|'))
      .map((line) => line.split('|')[1] ?? '');
    const names = DOCUMENTED_SETTINGS.map(([name]) => name);
    const undocumented = names.filter((name) => !documented.some((cell) => cell.includes(`\`${name}\``)));
    expect(undocumented).toEqual([]);
    expect(settingsHelp().map((line) => line.trim().split(' ')[0])).toEqual(names);
  });
});

describe('rules relating settings', () => {
  it('wants a lease longer than the dispatch call it protects', () => {
    expect(problemsOf({ ...complete, ZEKT_LEASE_MS: '10000' })).toEqual([
      'ZEKT_LEASE_MS (10000) must be longer than ZEKT_DISPATCH_TIMEOUT_MS (10000): a lease must outlast the call it protects',
    ]);
  });

  it('reads ZEKT_DATABASE_PREPARED_STATEMENTS only with DATABASE_URL', () => {
    expect(
      loadConfig({ ...complete, ZEKT_DATABASE_PREPARED_STATEMENTS: 'off' }, { cwd: '/srv' }).database,
    ).toEqual({ kind: 'sqlite', path: '/srv/.zekt/zekt.db' });
    expect(
      problemsOf({ ...complete, DATABASE_URL: 'mysql://x', ZEKT_DATABASE_PREPARED_STATEMENTS: 'off' }),
    ).toEqual([
      'DATABASE_URL must start with postgres:// or postgresql://; unset it to use the embedded SQLite store',
    ]);
  });

  it('wants https alerts in production, and their secret with their URL', () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect(
      problemsOf({
        ...complete,
        NODE_ENV: 'production',
        ZEKT_BASE_URL: 'https://zekt.example',
        ZEKT_ALERT_URL: 'http://alerts.example/zekt',
        ZEKT_ALERT_SECRET: secret,
      }),
    ).toEqual([
      'ZEKT_ALERT_URL must use https in production: alerts name accounts, repositories and their health (got "http://alerts.example/zekt")',
    ]);
    expect(problemsOf({ ...complete, ZEKT_ALERT_URL: 'https://alerts.example/zekt' })).toEqual([
      'ZEKT_ALERT_SECRET is required with ZEKT_ALERT_URL: the receiver verifies the alerts with it (echo whsec_$(openssl rand -base64 32))',
    ]);
    expect(problemsOf({ ...complete, ZEKT_ALERT_SECRET: 'plain' })).toEqual([
      'ZEKT_ALERT_SECRET must be a Standard Webhooks secret: whsec_ followed by the base64 of at least 24 random bytes (echo whsec_$(openssl rand -base64 32))',
    ]);
  });

  it('names an unreadable key file once, without asking for a key too', () => {
    const problems = problemsOf({
      ...complete,
      GITHUB_PRIVATE_KEY: '',
      GITHUB_PRIVATE_KEY_PATH: 'missing.pem',
    });
    expect(problems).toEqual([
      expect.stringMatching(/^GITHUB_PRIVATE_KEY_PATH missing\.pem cannot be read: /),
    ]);
  });

  it('falls back to the default of a refused value, so the rules relating it still run', () => {
    expect(problemsOf({ ...complete, ZEKT_DISPATCH_TIMEOUT_MS: 'soon', ZEKT_LEASE_MS: '5000' })).toEqual([
      'ZEKT_DISPATCH_TIMEOUT_MS must be a whole number from 100 to 120000 (got "soon")',
      'ZEKT_LEASE_MS (5000) must be longer than ZEKT_DISPATCH_TIMEOUT_MS (10000): a lease must outlast the call it protects',
    ]);
  });
});
