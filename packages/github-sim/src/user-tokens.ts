import { createHash, timingSafeEqual } from 'node:crypto';
import { randomAlphanumeric, randomHex } from './ids.js';
import { httpUrl, redirectAllowed } from './redirect-uri.js';
import type { SimContext } from './sim-context.js';
import type { AccountRecord, AppRecord, AuthorizationCodeRecord, UserTokenRecord } from './sim-state.js';

/**
 * The credentials of GitHub's OAuth web flow for a GitHub App: one-time authorization codes and the
 * expiring user access tokens they are exchanged for.
 * https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app
 */

/** Codes expire after 10 minutes. */
export const AUTHORIZATION_CODE_LIFETIME_MS = 10 * 60 * 1000;
/** User access tokens expire after 8 hours… */
export const USER_TOKEN_LIFETIME_SECONDS = 8 * 60 * 60;
/** …and their refresh tokens after 6 months (184 days). */
export const REFRESH_TOKEN_LIFETIME_SECONDS = 15_897_600;

/**
 * GitHub's error answers of the token exchange (served with HTTP 200), as documented on
 * "Troubleshooting OAuth app access token request errors"; real answers carry the absolute
 * `error_uri`.
 */
const ERRORS = {
  incorrect_client_credentials: {
    error_description: 'The client_id and/or client_secret passed are incorrect.',
    error_uri:
      'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#incorrect-client-credentials',
  },
  redirect_uri_mismatch: {
    error_description: 'The redirect_uri MUST match the registered callback URL for this application.',
    error_uri:
      'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#redirect-uri-mismatch2',
  },
  bad_verification_code: {
    error_description: 'The code passed is incorrect or expired.',
    error_uri:
      'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code',
  },
} as const;

export type TokenExchangeError = keyof typeof ERRORS;

export interface TokenExchangeErrorBody {
  error: TokenExchangeError;
  error_description: string;
  error_uri: string;
}

export interface TokenExchangeSuccessBody {
  access_token: string;
  expires_in: number;
  refresh_token: string;
  refresh_token_expires_in: number;
  token_type: 'bearer';
  /** Always empty: GitHub Apps have permissions, not scopes. */
  scope: '';
}

/** The parameters of `POST /login/oauth/access_token` (query and body merged). */
export interface TokenExchangeParams {
  client_id?: string;
  client_secret?: string;
  code?: string;
  redirect_uri?: string;
}

function exchangeError(error: TokenExchangeError): TokenExchangeErrorBody {
  return { error, ...ERRORS[error] };
}

/** Compares secrets in constant time, whatever their lengths (hashing first evens them out). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** Issues a one-time code (20 hex characters, like GitHub's) for the user, bound to the App and the redirect. */
export function issueAuthorizationCode(
  ctx: SimContext,
  input: { app: AppRecord; user: AccountRecord; redirectUri: string; redirectUriRequested: boolean },
): string {
  const code = randomHex(10);
  ctx.state.authorizationCodes.set(code, {
    code,
    clientId: input.app.clientId,
    redirectUri: input.redirectUri,
    redirectUriRequested: input.redirectUriRequested,
    user: input.user,
    expiresAt: new Date(ctx.clock.now().getTime() + AUTHORIZATION_CODE_LIFETIME_MS),
  });
  return code;
}

/**
 * A `redirect_uri` given to the exchange must be the one the authorize request named; when that
 * request named none (the code went to the App's first callback URL), any URI the App's callback
 * URLs admit will do. GitHub lets the exchange leave it out either way.
 */
function redirectMatches(app: AppRecord, record: AuthorizationCodeRecord, given: string): boolean {
  if (record.redirectUriRequested) return given === record.redirectUri;
  const url = httpUrl(given);
  return url !== undefined && redirectAllowed(url, app.callbackUrls);
}

/**
 * Exchanges a code for a user access token. The App's credentials are checked first (GitHub does
 * too), then the code (unknown, used, expired, or another App's), then a given `redirect_uri`. A
 * code is used up only by a successful exchange, so a client that got its secret wrong can retry.
 */
export function exchangeCode(
  ctx: SimContext,
  params: TokenExchangeParams,
): TokenExchangeSuccessBody | TokenExchangeErrorBody {
  const { client_id: clientId, client_secret: clientSecret, code, redirect_uri: redirectUri } = params;
  const app = clientId === undefined ? undefined : ctx.state.findAppByClientId(clientId);
  if (app === undefined || clientSecret === undefined || !sameSecret(clientSecret, app.clientSecret)) {
    return exchangeError('incorrect_client_credentials');
  }
  const now = ctx.clock.now().getTime();
  const record = code === undefined ? undefined : ctx.state.authorizationCodes.get(code);
  if (record === undefined || record.clientId !== clientId || record.expiresAt.getTime() <= now) {
    return exchangeError('bad_verification_code');
  }
  if (redirectUri !== undefined && redirectUri !== '' && !redirectMatches(app, record, redirectUri)) {
    return exchangeError('redirect_uri_mismatch');
  }
  ctx.state.authorizationCodes.delete(record.code);
  const token = createUserToken(ctx, app, record.user);
  return {
    access_token: token.token,
    expires_in: USER_TOKEN_LIFETIME_SECONDS,
    refresh_token: token.refreshToken,
    refresh_token_expires_in: REFRESH_TOKEN_LIFETIME_SECONDS,
    token_type: 'bearer',
    scope: '',
  };
}

function createUserToken(ctx: SimContext, app: AppRecord, user: AccountRecord): UserTokenRecord {
  const now = ctx.clock.now().getTime();
  const record: UserTokenRecord = {
    token: `ghu_${randomAlphanumeric(36)}`,
    appId: app.id,
    user,
    expiresAt: new Date(now + USER_TOKEN_LIFETIME_SECONDS * 1000),
    refreshToken: `ghr_${randomAlphanumeric(76)}`,
    refreshTokenExpiresAt: new Date(now + REFRESH_TOKEN_LIFETIME_SECONDS * 1000),
  };
  ctx.state.userTokens.set(record.token, record);
  return record;
}

/** The user access token, if it exists and has not expired by the simulator's clock. */
export function liveUserToken(ctx: SimContext, token: string): UserTokenRecord | undefined {
  const record = ctx.state.userTokens.get(token);
  if (record === undefined || record.expiresAt.getTime() <= ctx.clock.now().getTime()) return undefined;
  return record;
}
