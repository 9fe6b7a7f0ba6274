import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isExpired } from '../domain/api-tokens.js';
import type { Clock } from '../domain/clock.js';
import { hashApiToken, looksLikeApiToken } from '../security/api-tokens.js';
import { cookieNames, hashSessionValue, looksLikeSessionValue } from '../security/sessions.js';
import type { AccountRow, UserRow } from '../store/schema.js';
import { findSessionUser } from '../store/sessions.js';
import type { Store } from '../store/store.js';
import { findUserByTokenHash, listMemberAccounts } from '../store/users.js';
import { readCookie } from './cookies.js';
import { HttpError } from './problem.js';
import type { RateLimiter } from './rate-limits.js';

/**
 * Who is calling the management API, and which accounts they may act for. Every management query
 * is scoped by `accounts`; an object of any other account is answered 404, as if it did not exist.
 */
export interface Caller {
  user: UserRow;
  accounts: AccountRow[];
  /** The API token of the request; null for the console's session. */
  tokenId: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
  }
}

/** Management routes accept an API token or a console session cookie. */
export const MANAGEMENT_SECURITY: Array<Record<string, string[]>> = [
  { apiToken: [] },
  { consoleSession: [] },
];

export function requireCaller(request: FastifyRequest): Caller {
  if (!request.caller)
    throw new HttpError('unauthenticated', 'send an API token: Authorization: Bearer zkt_…');
  return request.caller;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Adds authentication to every route of `app` (an encapsulated plugin scope): an API token in
 * `Authorization: Bearer zkt_…` (scripts, the CLI), or else the console's session cookie.
 *
 * A cookie is sent by the browser on its own, so a change authenticated by it must prove it comes
 * from the console's own pages (cross-site request forgery): its `Origin` must be Zekt's, or,
 * where a browser sends no Origin, `Sec-Fetch-Site: same-origin`. SameSite=Lax already keeps the
 * cookie off cross-site POSTs in current browsers; this check does not depend on it.
 */
export function authenticateCallers(
  app: FastifyInstance,
  deps: { store: Store; clock: Clock; baseUrl: string; secureCookies: boolean; rateLimiter: RateLimiter },
): void {
  const origin = new URL(deps.baseUrl).origin;
  const sessionCookie = cookieNames(deps.secureCookies).session;
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization;
    const session = header === undefined ? readCookie(request, sessionCookie) : undefined;
    let user: UserRow | undefined;
    let callerKey: string;
    let tokenId: string | null = null;
    if (session !== undefined) {
      if (!SAFE_METHODS.has(request.method)) checkSameOrigin(request, origin);
      callerKey = hashSessionValue(session);
      user = looksLikeSessionValue(session)
        ? await findSessionUser(deps.store.db, callerKey, deps.clock.now())
        : undefined;
      if (!user) {
        throw new HttpError('session_expired', 'your console session has ended: log in again at /auth/login');
      }
    } else {
      const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
      if (!match) {
        throw new HttpError(
          'unauthenticated',
          'send an API token: Authorization: Bearer zkt_… (create one with `zekt token create --login <user>`), or log in to the console at /auth/login',
        );
      }
      const token = match[1]!;
      callerKey = hashApiToken(token);
      const found = looksLikeApiToken(token)
        ? await findUserByTokenHash(deps.store.db, callerKey)
        : undefined;
      if (!found) throw new HttpError('invalid_token', 'the API token is unknown or revoked');
      if (found.expires_at !== null && isExpired(found.expires_at, deps.clock.now())) {
        throw new HttpError(
          'invalid_token',
          `the API token expired at ${new Date(found.expires_at).toISOString()}: create a new one (Settings › API tokens in the console, or POST /api/v1/tokens)`,
        );
      }
      const { token_id, expires_at: _expiresAt, ...row } = found;
      user = row;
      tokenId = token_id;
    }
    await deps.rateLimiter.countCall(callerKey);
    const accounts = (await listMemberAccounts(deps.store.db, user.user_id)).filter(
      (a) => a.uninstalled_at === null,
    );
    request.caller = { user, accounts, tokenId };
  });
}

/**
 * A change made with the session cookie must come from the console's own pages: `Origin` is
 * Zekt's, or (where a browser sends none) `Sec-Fetch-Site: same-origin`.
 */
export function checkSameOrigin(request: FastifyRequest, origin: string): void {
  const sent = request.headers.origin;
  const fetchSite = request.headers['sec-fetch-site'];
  if (sent === undefined ? fetchSite === 'same-origin' : sent === origin) return;
  throw new HttpError(
    'csrf_rejected',
    `a change made with the console's session cookie must come from the console (Origin ${origin}); scripts use an API token instead`,
  );
}

/**
 * The weaker check for logging out: refused only when the browser says the request comes from
 * another site (a foreign `Origin`, or `Sec-Fetch-Site` other than same-origin). Browsers send
 * `Origin` on every POST, so a forged logout always carries one; a request with neither header
 * comes from a script, which cannot hold someone else's cookie.
 */
export function refuseCrossSite(request: FastifyRequest, origin: string): void {
  const sent = request.headers.origin;
  const fetchSite = request.headers['sec-fetch-site'];
  const foreign =
    (sent !== undefined && sent !== origin) ||
    (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none');
  if (!foreign) return;
  throw new HttpError(
    'csrf_rejected',
    `a change made with the console's session cookie must come from the console (Origin ${origin})`,
  );
}

/** The member account with this login, or 404 — also when it exists but the caller is not a member. */
export function memberAccount(caller: Caller, login: string): AccountRow {
  const account = caller.accounts.find((a) => a.login.toLowerCase() === login.toLowerCase());
  if (!account) throw new HttpError('account_not_found', `no account ${login} that you are a member of`);
  return account;
}

export function isMemberOf(caller: Caller, accountId: number): boolean {
  return caller.accounts.some((a) => a.account_id === accountId);
}
