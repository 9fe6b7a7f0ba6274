import type { Config } from '../config.js';
import type { CredentialSource } from '../domain/service-checks.js';

/**
 * The GitHub App credentials the checks verify, with where they come from. The checks take them
 * as input: from the environment today, from the store once the App was registered at setup
 * (settings in the environment win); null when there are none yet (setup mode).
 */
export interface AppCredentials {
  appId: number;
  privateKey: string;
  webhookSecret: string;
  clientId: string | null;
  clientSecret: string | null;
  source: CredentialSource;
}

/** The credentials the environment sets, or null when it sets no App. */
export function credentialsFromConfig(config: Pick<Config, 'github'>): AppCredentials | null {
  const { appId, privateKey, webhookSecret, clientId, clientSecret } = config.github;
  if (appId === 0 || privateKey === '') return null;
  return { appId, privateKey, webhookSecret, clientId, clientSecret, source: 'environment' };
}

/** Where a browser registers the App in setup mode (its code is printed at start). */
export function setupUrlOf(baseUrl: string): string {
  return `${baseUrl}/setup`;
}
