import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import type { GitHubSimulator } from '../../src/index.js';

/** Signs an App JWT with chosen claims (Octokit's defaults: iat = now − 30, exp = iat + 600). */
export async function signAppJwt(
  privateKey: string | KeyObject,
  claims: { iss?: unknown; iat?: unknown; exp?: unknown },
): Promise<string> {
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  return new SignJWT(claims as Record<string, unknown>)
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
    .sign(key);
}

/** A valid JWT for the simulator's App, timed by the given clock (seconds). */
export function appJwt(sim: GitHubSimulator, nowSeconds = Math.floor(Date.now() / 1000)): Promise<string> {
  return signAppJwt(sim.app.privateKeyPem, { iss: sim.app.id, iat: nowSeconds - 30, exp: nowSeconds + 570 });
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or null for an empty body. */
  body: unknown;
}

/** One request to the simulator's REST API with a raw `Authorization` value (or none). */
export async function api(
  sim: GitHubSimulator,
  method: string,
  path: string,
  options: { authorization?: string; body?: unknown; rawBody?: string } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { accept: 'application/vnd.github+json' };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json; charset=utf-8';
  const response = await fetch(`${sim.apiUrl}${path}`, { method, headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? null : JSON.parse(text) };
}

/** Creates an installation access token through the REST API, as a backend would. */
export async function installationToken(
  sim: GitHubSimulator,
  installationId: number,
  request: Record<string, unknown> = {},
  nowSeconds?: number,
): Promise<string> {
  const response = await api(sim, 'POST', `/app/installations/${installationId}/access_tokens`, {
    authorization: `Bearer ${await appJwt(sim, nowSeconds)}`,
    body: request,
  });
  if (response.status !== 201)
    throw new Error(`access token request failed: ${JSON.stringify(response.body)}`);
  return (response.body as { token: string }).token;
}

/**
 * Runs GitHub's OAuth web flow for `login` over HTTP, as a browser and a backend would (authorize
 * with the simulator's `login` parameter, then exchange the code), and returns the `ghu_` token.
 */
export async function userAccessToken(
  sim: GitHubSimulator,
  login: string,
  redirectUri = sim.app.callbackUrls[0] ?? 'http://127.0.0.1/callback',
): Promise<string> {
  const authorizeUrl = new URL(`${sim.url}/login/oauth/authorize`);
  authorizeUrl.search = new URLSearchParams({
    client_id: sim.app.clientId,
    redirect_uri: redirectUri,
    login,
  }).toString();
  const authorized = await fetch(authorizeUrl, { redirect: 'manual' });
  const code = new URL(authorized.headers.get('location') ?? redirectUri).searchParams.get('code');
  if (authorized.status !== 302 || code === null)
    throw new Error(`authorize answered ${authorized.status}: ${await authorized.text()}`);
  const exchanged = await fetch(`${sim.url}/login/oauth/access_token`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: sim.app.clientId, client_secret: sim.app.clientSecret, code }),
  });
  const body = (await exchanged.json()) as { access_token?: string };
  if (body.access_token === undefined) throw new Error(`code exchange failed: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** A clock a test can move. */
export function manualClock(start = new Date()) {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    advanceSeconds(seconds: number) {
      now += seconds * 1000;
    },
  };
}
