import { Type } from 'typebox';
import { OAuthError } from '../../github/github-oauth.js';
import { sameSecret } from '../../security/same-secret.js';
import {
  cookieNames,
  generateOAuthState,
  generateSessionValue,
  hashSessionValue,
  looksLikeSessionValue,
  OAUTH_STATE_LIFETIME_MS,
  SESSION_LIFETIME_MS,
} from '../../security/sessions.js';
import { createSession, deleteSession } from '../../store/sessions.js';
import { refreshGitHubMemberships, upsertUser } from '../../store/users.js';
import type { App, AppContext } from '../app-context.js';
import { refuseCrossSite } from '../authenticate.js';
import { readCookie, setCookie } from '../cookies.js';
import { HttpError } from '../problem.js';

/**
 * The console's login: GitHub's OAuth web flow for the App's user tokens.
 *
 *   GET /auth/login      → 302 to GitHub's authorize page, with a `state` held in a cookie
 *   GET /auth/callback   ← GitHub sends the browser back with `code` and `state`
 *                          → exchange the code, read the user and their installations, refresh
 *                            their memberships, start a session (cookie), 302 to the console
 *   POST /auth/logout    → ends the session
 *
 * The `state` is a random value the browser holds in an HttpOnly cookie and GitHub echoes back:
 * a callback that does not carry the value this browser was given is refused (login CSRF).
 */
export function registerAuthRoutes(
  app: App,
  context: Pick<AppContext, 'store' | 'clock' | 'baseUrl' | 'oauth'>,
): void {
  const secure = context.baseUrl.startsWith('https://');
  const names = cookieNames(secure);
  const redirectUri = `${context.baseUrl}/auth/callback`;
  const origin = new URL(context.baseUrl).origin;
  const returnPath = (value: string | undefined) => sameOriginPath(value, origin);

  async function requireOAuth() {
    const oauth = await context.oauth();
    if (!oauth) {
      throw new HttpError(
        'oauth_not_configured',
        "console login is not configured: register the GitHub App at /setup, or set GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET from the GitHub App's settings",
      );
    }
    return oauth;
  }

  app.get(
    '/auth/login',
    {
      schema: {
        summary: 'Start the console login: redirects to GitHub',
        tags: ['console'],
        querystring: Type.Object(
          { returnTo: Type.Optional(Type.String({ description: 'a path of the console to land on' })) },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const oauth = await requireOAuth();
      const state = generateOAuthState();
      const returnTo = returnPath(request.query.returnTo);
      const value = `${state}.${Buffer.from(returnTo, 'utf8').toString('base64url')}`;
      return setCookie(reply, names.state, value, { maxAge: OAUTH_STATE_LIFETIME_MS / 1000, secure })
        .header('cache-control', 'no-store')
        .redirect(oauth.authorizeUrl({ state, redirectUri }), 302);
    },
  );

  app.get(
    '/auth/callback',
    {
      schema: {
        summary: 'Where GitHub sends the browser back after the login',
        tags: ['console'],
        querystring: Type.Object({
          code: Type.Optional(Type.String()),
          state: Type.Optional(Type.String()),
          error: Type.Optional(Type.String()),
          error_description: Type.Optional(Type.String()),
        }),
      },
    },
    async (request, reply) => {
      const oauth = await requireOAuth();
      // The state cookie is single-use, whatever happens next.
      setCookie(reply, names.state, '', { maxAge: 0, secure });
      reply.header('cache-control', 'no-store');
      const { code, state, error, error_description: description } = request.query;
      if (error !== undefined) {
        throw new HttpError('oauth_denied', `GitHub did not log you in: ${description ?? error}`);
      }
      const held = readCookie(request, names.state);
      const [heldState, heldReturn] = (held ?? '').split('.');
      if (!heldState || state === undefined || !sameSecret(heldState, state)) {
        throw new HttpError(
          'invalid_oauth_state',
          'this login was not started here or took longer than 10 minutes: start again at /auth/login',
        );
      }
      if (code === undefined) throw new HttpError('invalid_request', 'GitHub sent no code: start again');

      let user: { id: number; login: string };
      let accountIds: number[];
      try {
        const token = await oauth.exchangeCode({ code, redirectUri });
        user = await oauth.getUser(token);
        accountIds = (await oauth.listUserInstallations(token)).map((i) => i.account.id);
      } catch (cause) {
        if (cause instanceof OAuthError && cause.githubError !== undefined) {
          throw new HttpError('oauth_failed', `${cause.message}; start again at /auth/login`, {}, { cause });
        }
        throw new HttpError(
          'github_unavailable',
          `GitHub did not complete the login: ${(cause as Error).message}`,
          {},
          { cause },
        );
      }

      const session = generateSessionValue();
      const now = context.clock.now();
      await context.store.transaction(async (trx) => {
        const row = await upsertUser(trx, { login: user.login, githubId: user.id }, now);
        await refreshGitHubMemberships(trx, row.user_id, accountIds, now);
        await createSession(
          trx,
          {
            sessionHash: hashSessionValue(session),
            userId: row.user_id,
            expiresAt: now + SESSION_LIFETIME_MS,
          },
          now,
        );
      });
      request.log.info({ login: user.login, accounts: accountIds.length }, 'console login');
      // Normalised when the login started; checked again because a cookie is the browser's to send.
      const returnTo = returnPath(Buffer.from(heldReturn ?? '', 'base64url').toString('utf8'));
      // Its own Set-Cookie, beside the state cookie's removal above.
      return setCookie(reply, names.session, session, {
        maxAge: SESSION_LIFETIME_MS / 1000,
        secure,
      }).redirect(returnTo, 302);
    },
  );

  app.post(
    '/auth/logout',
    { schema: { summary: 'End the console session', tags: ['console'] } },
    async (request, reply) => {
      const session = readCookie(request, names.session);
      // Ending a session is a change made with the cookie: another site must not be able to do it.
      if (session !== undefined) refuseCrossSite(request, origin);
      if (session !== undefined && looksLikeSessionValue(session)) {
        await deleteSession(context.store.db, hashSessionValue(session));
      }
      return setCookie(reply, names.session, '', { maxAge: 0, secure }).code(204).send();
    },
  );
}

/**
 * Where to land after the login: `value` resolved as browsers resolve a `Location` — against the
 * console's origin, with their URL parser, which drops tabs and newlines, reads `\\` as `/` and
 * removes dot segments — and accepted only when it stays on that origin (never an open redirect).
 * The answer is the parsed path, query and fragment, percent-encoded, so it is always a valid header
 * value, and it is final: resolved again it is itself. Removing dot segments can leave a path that
 * starts with `//` (`/.//evil.example`), which a browser would read as another host; its leading
 * slashes are collapsed into one, so the path stays on the console whoever parses it next.
 */
export function sameOriginPath(value: string | undefined, origin: string): string {
  if (value === undefined) return '/';
  let url: URL;
  try {
    url = new URL(value, `${origin}/`);
  } catch {
    return '/';
  }
  if (url.origin !== origin) return '/';
  return `${url.pathname.replace(/^\/+/, '/')}${url.search}${url.hash}`;
}
