import type { Kysely } from 'kysely';
import { type Config, ConfigError } from '../config.js';
import { createSecretBox } from '../security/secret-box.js';
import { insertStoredApp, readStoredApp } from '../store/app-setup.js';
import type { Database } from '../store/schema.js';

/**
 * Which GitHub App Zekt acts as, and where its credentials come from:
 *
 * 1. the environment (`GITHUB_APP_ID`, `GITHUB_PRIVATE_KEY[_PATH]`, `GITHUB_WEBHOOK_SECRET`,
 *    `GITHUB_CLIENT_ID`/`_SECRET`) when set — it always wins;
 * 2. else the App registered through setup (the manifest flow), kept in the store sealed with a key
 *    derived from `ZEKT_SECRET`, so every process of the deployment reads the same App;
 * 3. else none: setup mode (the API answers, webhooks get 503 `setup_required`, `/readyz` fails).
 *
 * `resolveAppCredentials` is the one answer to that question; the running service asks it through
 * `live-app-credentials.ts`, which caches the answer.
 */
export interface AppCredentials {
  /** `environment`: the App's settings are set (they win); `store`: registered through setup. */
  source: 'environment' | 'store';
  appId: number;
  privateKey: string;
  webhookSecret: string;
  /** The App's OAuth client (the console login); null when the environment sets none. */
  clientId: string | null;
  clientSecret: string | null;
  /** What GitHub said when the App was registered; null for the environment's App (`GET /app` tells). */
  slug: string | null;
  name: string | null;
  /** The App's page on GitHub, `<GITHUB_URL>/apps/<slug>`. */
  htmlUrl: string | null;
  /** The user or organisation that owns the App on GitHub. */
  owner: string | null;
  /** When the App was registered through setup; null for the environment's. */
  registeredAt: number | null;
}

/** What the store keeps of an App registered through setup: all of it sealed in one value. */
export interface RegisteredApp {
  appId: number;
  slug: string;
  name: string;
  htmlUrl: string;
  owner: string;
  privateKey: string;
  webhookSecret: string;
  clientId: string;
  clientSecret: string;
}

/** What resolving needs: the store and the configuration (`github` settings and `ZEKT_SECRET`). */
export interface AppCredentialsInput {
  store: { db: Kysely<Database> };
  config: Pick<Config, 'github' | 'secret'>;
}

/**
 * The App credentials in use and their source, or null when there are none (setup mode).
 * Throws a `ConfigError` naming `ZEKT_SECRET` when the stored App cannot be decrypted with it.
 *
 * @example
 * const app = await resolveAppCredentials({ store, config });
 * app === null ? 'setup mode' : `App ${app.appId} from the ${app.source}`;
 */
export async function resolveAppCredentials(input: AppCredentialsInput): Promise<AppCredentials | null> {
  const fromEnvironment = environmentAppCredentials(input.config);
  if (fromEnvironment !== null) return fromEnvironment;
  const row = await readStoredApp(input.store.db);
  if (row === undefined) return null;
  const app = openRegisteredApp(input.config.secret, row.sealed);
  return { source: 'store', ...app, registeredAt: row.registered_at };
}

/** The App the environment sets (it wins over a stored one), or null when it sets none. */
export function environmentAppCredentials(config: Pick<Config, 'github'>): AppCredentials | null {
  const settings = config.github.app;
  if (settings === null) return null;
  return {
    source: 'environment',
    ...settings,
    slug: null,
    name: null,
    htmlUrl: null,
    owner: null,
    registeredAt: null,
  };
}

/**
 * Stores the App registered through setup, sealed, unless one is stored already. True when this
 * one was stored; false when another setup finished first.
 */
export function storeRegisteredApp(
  db: Kysely<Database>,
  secret: string,
  app: RegisteredApp,
  now: number,
): Promise<boolean> {
  return insertStoredApp(db, createSecretBox(secret, 'app-credentials').seal(JSON.stringify(app)), now);
}

function openRegisteredApp(secret: string, sealed: string): RegisteredApp {
  try {
    return JSON.parse(createSecretBox(secret, 'app-credentials').open(sealed)) as RegisteredApp;
  } catch (error) {
    throw new ConfigError([
      `the GitHub App registered through setup cannot be decrypted with this ZEKT_SECRET: set the ZEKT_SECRET it was registered with (${(error as Error).message})`,
    ]);
  }
}
