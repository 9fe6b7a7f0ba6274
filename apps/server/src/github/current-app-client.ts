import { createHash } from 'node:crypto';
import { createGitHubClient, GitHubApiError, type GitHubClient } from './github-client.js';
import { createGitHubOAuth, type GitHubOAuth } from './github-oauth.js';

/** The credentials a client is built from (`setup/app-credentials.ts` answers them). */
export interface ClientCredentials {
  appId: number;
  privateKey: string;
  clientId: string | null;
  clientSecret: string | null;
}

/** Why a call to GitHub cannot be made yet. */
export const SETUP_MODE_MESSAGE =
  'no GitHub App is configured yet (setup mode): register one at <ZEKT_BASE_URL>/setup with the setup code `zekt serve` or `zekt setup` prints';

/**
 * A `GitHubClient` that acts as whichever App the process uses now: each call asks `credentials`
 * (cached by the caller) and goes to a client built for them, kept while they stay the same, so
 * installation tokens stay cached. In setup mode a dispatch fails as an attempt would and every
 * other call throws a `GitHubApiError` without a status.
 *
 * A delivery's call (a dispatch, a run read) that finds no App asks once more for a fresh answer
 * before failing: the caller's cache may hold a setup-mode answer read just before another process
 * registered the App, and an attempt failed for that would wait a whole retry interval for nothing.
 */
export function createCurrentAppClient(options: {
  credentials: (options?: { fresh?: boolean }) => Promise<ClientCredentials | null>;
  apiUrl: string;
}): GitHubClient {
  let current: { credentials: ClientCredentials; key: string; client: GitHubClient } | null = null;
  const client = async (fresh = false): Promise<GitHubClient | null> => {
    const credentials = await options.credentials(fresh ? { fresh } : undefined);
    if (credentials === null) return null;
    // The caller hands out the same object while the credentials stay the same: every dispatch
    // asks, and hashing the private key for each one was 1.6 % of a webhook's instructions (under
    // valgrind, docs/performance.md).
    if (current?.credentials === credentials) return current.client;
    const key = `${credentials.appId}:${fingerprint(credentials.privateKey)}`;
    if (current?.key !== key) {
      current = {
        credentials,
        key,
        client: createGitHubClient({
          appId: credentials.appId,
          privateKey: credentials.privateKey,
          apiUrl: options.apiUrl,
        }),
      };
    } else {
      current.credentials = credentials;
    }
    return current.client;
  };
  const forDelivery = async (): Promise<GitHubClient | null> => (await client()) ?? client(true);
  const required = async (): Promise<GitHubClient> => {
    const found = await client();
    if (found === null) throw new GitHubApiError(undefined, SETUP_MODE_MESSAGE, []);
    return found;
  };

  return {
    async dispatch(input) {
      const found = await forDelivery();
      if (found === null) return { ok: false, headers: {}, message: SETUP_MODE_MESSAGE, durationMs: 0 };
      return found.dispatch(input);
    },
    async dispatchWorkflow(input) {
      const found = await forDelivery();
      if (found === null) return { ok: false, headers: {}, message: SETUP_MODE_MESSAGE, durationMs: 0 };
      return found.dispatchWorkflow(input);
    },
    async readWorkflowRun(input) {
      const found = await forDelivery();
      if (found === null)
        return { outcome: 'failed', headers: {}, message: SETUP_MODE_MESSAGE, durationMs: 0 };
      return found.readWorkflowRun(input);
    },
    async appInstallUrl() {
      return (await client())?.appInstallUrl() ?? null;
    },
    createRepositoryHook: async (input) => (await required()).createRepositoryHook(input),
    listRepositoryHooks: async (input) => (await required()).listRepositoryHooks(input),
    updateRepositoryHook: async (input) => (await required()).updateRepositoryHook(input),
    deleteRepositoryHook: async (input) => (await required()).deleteRepositoryHook(input),
    listHookDeliveries: async (hook, cursor) => (await required()).listHookDeliveries(hook, cursor),
    redeliverHookDelivery: async (hook, id) => (await required()).redeliverHookDelivery(hook, id),
  };
}

/**
 * GitHub's OAuth web flow for the App in use, or null while the App has no OAuth client (setup
 * mode, or an environment without `GITHUB_CLIENT_ID`).
 */
export function createCurrentAppOAuth(options: {
  credentials: () => Promise<ClientCredentials | null>;
  webUrl: string;
  apiUrl: string;
}): () => Promise<GitHubOAuth | null> {
  let current: { key: string; oauth: GitHubOAuth } | null = null;
  return async () => {
    const credentials = await options.credentials();
    if (credentials?.clientId == null || credentials.clientSecret === null) return null;
    const key = `${credentials.clientId}:${fingerprint(credentials.clientSecret)}`;
    if (current?.key !== key) {
      current = {
        key,
        oauth: createGitHubOAuth({
          webUrl: options.webUrl,
          apiUrl: options.apiUrl,
          clientId: credentials.clientId,
          clientSecret: credentials.clientSecret,
        }),
      };
    }
    return current.oauth;
  };
}

/** Tells credentials apart without keeping a second copy of the secret in a string. */
function fingerprint(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}
