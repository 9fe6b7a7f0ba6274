import { Octokit } from '@octokit/core';

/**
 * "Log in with GitHub" for the console: GitHub's web application flow for a GitHub App's user
 * access tokens. https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app
 *
 * The user token is used at once — who the user is, and which installations of the App they can
 * access — and then dropped: Zekt keeps memberships, not GitHub credentials.
 */
export interface GitHubOAuthOptions {
  /** GitHub's web root: `https://github.com`, `https://<ghes>`, or the simulator. */
  webUrl: string;
  /** REST base URL. */
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  userAgent?: string;
}

export interface GitHubUser {
  id: number;
  login: string;
}

export interface UserInstallation {
  id: number;
  account: { id: number; login: string };
}

/** GitHub refused the login (the code, the App's credentials, or the user's token). */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  constructor(
    message: string,
    readonly githubError?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface GitHubOAuth {
  authorizeUrl(input: { state: string; redirectUri: string }): string;
  exchangeCode(input: { code: string; redirectUri: string }): Promise<string>;
  getUser(token: string): Promise<GitHubUser>;
  listUserInstallations(token: string): Promise<UserInstallation[]>;
}

export function createGitHubOAuth(options: GitHubOAuthOptions): GitHubOAuth {
  const webUrl = options.webUrl.replace(/\/+$/, '');
  const userAgent = options.userAgent ?? 'zekt';
  const octokit = (token: string) =>
    new Octokit({ auth: token, baseUrl: options.apiUrl, userAgent, request: { retries: 0 } });

  return {
    authorizeUrl({ state, redirectUri }) {
      const url = new URL(`${webUrl}/login/oauth/authorize`);
      url.searchParams.set('client_id', options.clientId);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('state', state);
      return url.toString();
    },

    async exchangeCode({ code, redirectUri }) {
      let response: Response;
      try {
        response = await fetch(`${webUrl}/login/oauth/access_token`, {
          method: 'POST',
          headers: {
            accept: 'application/json',
            'content-type': 'application/json',
            'user-agent': userAgent,
          },
          body: JSON.stringify({
            client_id: options.clientId,
            client_secret: options.clientSecret,
            code,
            redirect_uri: redirectUri,
          }),
          signal: AbortSignal.timeout(10_000),
        });
      } catch (cause) {
        throw new OAuthError(
          `GitHub did not answer the token exchange (${(cause as Error).message})`,
          undefined,
          {
            cause,
          },
        );
      }
      const body = (await response.json().catch(() => null)) as {
        access_token?: unknown;
        error?: unknown;
        error_description?: unknown;
      } | null;
      // GitHub answers a refused exchange with 200 and an `error` field.
      if (typeof body?.error === 'string') {
        const description = typeof body.error_description === 'string' ? body.error_description : body.error;
        throw new OAuthError(`GitHub refused the login: ${description}`, body.error);
      }
      if (!response.ok || typeof body?.access_token !== 'string') {
        throw new OAuthError(`GitHub's token exchange answered ${response.status} without a token`);
      }
      return body.access_token;
    },

    async getUser(token) {
      const { data } = await octokit(token).request('GET /user');
      return { id: Number(data.id), login: data.login };
    },

    async listUserInstallations(token) {
      const installations: UserInstallation[] = [];
      for (let page = 1; page <= 50; page++) {
        const { data } = await octokit(token).request('GET /user/installations', { per_page: 100, page });
        for (const installation of data.installations) {
          const account = installation.account as { id?: number; login?: string } | null;
          if (account?.id !== undefined && account.login !== undefined) {
            installations.push({ id: installation.id, account: { id: account.id, login: account.login } });
          }
        }
        if (data.installations.length < 100) break;
      }
      return installations;
    },
  };
}
