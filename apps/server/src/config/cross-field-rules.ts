import { APP_SETTING_NAMES, MIN_SECRET_LENGTH, type SettingName, type SettingValues } from './settings.js';

/**
 * The rules that relate settings to each other or to the mode, checked after every setting was
 * read on its own (settings.ts), so each problem is reported once, with all the others.
 * `privateKey` is the App's key as given, by value or from GITHUB_PRIVATE_KEY_PATH's file.
 */
export function crossFieldProblems(
  v: SettingValues,
  given: (name: SettingName) => boolean,
  privateKey: string | null,
): string[] {
  const problems: string[] = [];
  const production = v.NODE_ENV === 'production';

  if (production && !given('ZEKT_BASE_URL')) {
    problems.push(
      'ZEKT_BASE_URL is required in production: the public https URL GitHub and consumers reach Zekt at',
    );
  }
  if (production && v.ZEKT_BASE_URL?.startsWith('http://')) {
    problems.push('ZEKT_BASE_URL must use https in production: consumer workflows send their tokens to it');
  }
  if (
    production &&
    v.ZEKT_SECRET.length >= MIN_SECRET_LENGTH &&
    /^(dev|development|changeme|secret|test)/i.test(v.ZEKT_SECRET)
  ) {
    problems.push('ZEKT_SECRET looks like a development placeholder; generate one with openssl rand -hex 32');
  }

  // Any of the App's settings is a choice of the environment's App: the rest are required then.
  if (APP_SETTING_NAMES.some(given)) {
    if (!given('GITHUB_APP_ID')) {
      problems.push(
        "GITHUB_APP_ID is required with the App's other settings: the App id from the GitHub App's settings page (or unset them all to register the App through setup)",
      );
    }
    if (privateKey === null) {
      // An unreadable key file was reported when it was read.
      if (!given('GITHUB_PRIVATE_KEY_PATH')) {
        problems.push(
          "GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH is required: the App's private key (.pem)",
        );
      }
    } else if (!/-----BEGIN (RSA )?PRIVATE KEY-----/.test(privateKey)) {
      problems.push('the GitHub App private key must be a PEM file (-----BEGIN RSA PRIVATE KEY-----)');
    }
    if (v.GITHUB_WEBHOOK_SECRET === null) {
      problems.push("GITHUB_WEBHOOK_SECRET is required: the webhook secret from the GitHub App's settings");
    }
    if ((v.GITHUB_CLIENT_ID === null) !== (v.GITHUB_CLIENT_SECRET === null)) {
      problems.push(
        "GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET go together: both from the App's settings page, or neither (no console login)",
      );
    }
  }

  if (v.ZEKT_LEASE_MS <= v.ZEKT_DISPATCH_TIMEOUT_MS) {
    problems.push(
      `ZEKT_LEASE_MS (${v.ZEKT_LEASE_MS}) must be longer than ZEKT_DISPATCH_TIMEOUT_MS (${v.ZEKT_DISPATCH_TIMEOUT_MS}): a lease must outlast the call it protects`,
    );
  }

  if (production && v.ZEKT_ALERT_URL?.startsWith('http://')) {
    problems.push(
      `ZEKT_ALERT_URL must use https in production: alerts name accounts, repositories and their health (got ${JSON.stringify(v.ZEKT_ALERT_URL)})`,
    );
  }
  if (v.ZEKT_ALERT_URL !== null && v.ZEKT_ALERT_SECRET === null) {
    problems.push(
      'ZEKT_ALERT_SECRET is required with ZEKT_ALERT_URL: the receiver verifies the alerts with it (echo whsec_$(openssl rand -base64 32))',
    );
  }

  if (v.ZEKT_METRICS_PORT !== 0 && v.ZEKT_METRICS_PORT === v.PORT) {
    problems.push(
      `ZEKT_METRICS_PORT (${v.ZEKT_METRICS_PORT}) must differ from PORT: the metrics port is private, the API's is public`,
    );
  }
  if (v.ZEKT_METRICS_ON_API_PORT && v.ZEKT_METRICS_TOKEN === null) {
    problems.push(
      'ZEKT_METRICS_ON_API_PORT=true puts /metrics on the public API port: set ZEKT_METRICS_TOKEN too (openssl rand -hex 16), or scrape the private ZEKT_METRICS_PORT instead',
    );
  }
  return problems;
}
