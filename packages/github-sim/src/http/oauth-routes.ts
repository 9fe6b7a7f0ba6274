import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { userAccount } from '../logins.js';
import { errorPage, signInPage } from '../oauth-pages.js';
import { httpUrl, redirectAllowed, withQuery } from '../redirect-uri.js';
import type { SimContext } from '../sim-context.js';
import { SimInputError } from '../sim-input-error.js';
import type { AccountRecord } from '../sim-state.js';
import { exchangeCode, issueAuthorizationCode, type TokenExchangeParams } from '../user-tokens.js';
import { installRequestTracking } from './request-tracking.js';

/** Where GitHub serves the OAuth web flow: on the web host, not under the REST API. */
export const OAUTH_PATH = '/login/oauth';

/** GitHub's warning page for a `redirect_uri` outside the App's callback URLs. */
const REDIRECT_NOT_ASSOCIATED =
  "The redirect_uri is not associated with this application. The application might be misconfigured or could be trying to redirect you to a website you weren't expecting.";

function queryOf(request: FastifyRequest): URLSearchParams {
  return new URL(request.url, 'http://sim.invalid').searchParams;
}

function sendHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(html);
}

/**
 * Who the authorization is for: the `login` query parameter (a simulator extension; on GitHub it
 * only suggests an account), else whoever is signed in, unless `prompt=select_account` asks for
 * the account picker. A `login` that cannot sign in comes back as a problem for the sign-in page.
 */
function chooseUser(ctx: SimContext, query: URLSearchParams): { user?: AccountRecord; problem?: string } {
  const login = query.get('login');
  if (login !== null && login !== '') {
    try {
      return { user: userAccount(ctx, login, 'login') };
    } catch (error) {
      if (error instanceof SimInputError) return { problem: error.message };
      throw error;
    }
  }
  if (query.get('prompt') === 'select_account' || ctx.state.signedInUser === null) return {};
  return { user: ctx.state.signedInUser };
}

/**
 * `GET /login/oauth/authorize`: checks the App and the redirect, then sends the browser back to
 * `redirect_uri` with a one-time `code` (and `state`), or shows the sign-in page when nobody is
 * signed in. https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app#using-the-web-application-flow-to-generate-a-user-access-token
 */
async function authorize(ctx: SimContext, request: FastifyRequest, reply: FastifyReply) {
  const query = queryOf(request);
  const clientId = query.get('client_id');
  const app = clientId === null ? undefined : ctx.state.findAppByClientId(clientId);
  if (app === undefined) {
    return sendHtml(
      reply,
      404,
      errorPage(
        'Not Found',
        `The application with client_id ${JSON.stringify(clientId ?? '')} was not found.`,
      ),
    );
  }

  const requested = query.get('redirect_uri');
  let redirectUri: string;
  if (requested === null || requested === '') {
    // GitHub falls back on the App's first callback URL; without one there is nowhere to go.
    const fallback = app.callbackUrls[0];
    if (fallback === undefined) {
      return sendHtml(
        reply,
        400,
        errorPage(
          'Missing redirect_uri',
          'redirect_uri is required: the simulated App has no callback URL to fall back on (AppOptions.callbackUrls).',
        ),
      );
    }
    redirectUri = fallback;
  } else {
    const url = httpUrl(requested);
    if (url === undefined) {
      return sendHtml(
        reply,
        400,
        errorPage('Invalid redirect_uri', `redirect_uri must be an absolute http(s) URL; got ${requested}`),
      );
    }
    if (!redirectAllowed(url, app.callbackUrls)) {
      return sendHtml(reply, 400, errorPage('Be careful!', REDIRECT_NOT_ASSOCIATED));
    }
    redirectUri = requested;
  }

  const { user, problem } = chooseUser(ctx, query);
  if (user === undefined) {
    const params = [...query].filter(([name]) => name !== 'login');
    const users = [...ctx.state.accounts.values()]
      .filter((account) => account.type === 'User')
      .map((account) => account.login);
    const login = query.get('login') ?? undefined;
    return sendHtml(
      reply,
      200,
      signInPage({
        appName: app.name,
        action: `${OAUTH_PATH}/authorize`,
        params,
        users,
        ...(login === undefined ? {} : { login }),
        ...(problem === undefined ? {} : { problem }),
      }),
    );
  }

  const code = issueAuthorizationCode(ctx, {
    app,
    user,
    redirectUri,
    redirectUriRequested: redirectUri === requested,
  });
  const location = withQuery(redirectUri, { code, state: query.get('state') ?? undefined });
  return reply.code(302).header('location', location).send();
}

/** The body's parameters: form-encoded or JSON (GitHub accepts both); other bodies carry none. */
function bodyParams(request: FastifyRequest): Array<[string, string]> {
  const raw = request.body;
  if (typeof raw !== 'string' || raw.trim() === '') return [];
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') return [...new URLSearchParams(raw)];
  if (type !== 'application/json') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return [];
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return [];
  return Object.entries(parsed)
    .filter((entry): entry is [string, string | number] => ['string', 'number'].includes(typeof entry[1]))
    .map(([name, value]) => [name, String(value)]);
}

/** Query parameters and body parameters together; the body wins. */
function tokenParams(request: FastifyRequest): TokenExchangeParams {
  const params = new Map([...queryOf(request), ...bodyParams(request)]);
  const result: TokenExchangeParams = {};
  for (const name of ['client_id', 'client_secret', 'code', 'redirect_uri'] as const) {
    const value = params.get(name);
    if (value !== undefined) result[name] = value;
  }
  return result;
}

function acceptsJson(accept: string | undefined): boolean {
  return (accept ?? '')
    .split(',')
    .some((part) => part.split(';')[0]?.trim().toLowerCase() === 'application/json');
}

/**
 * `POST /login/oauth/access_token`: exchanges a code for a user access token. GitHub answers
 * refusals with 200 and an `error` body too. JSON with `Accept: application/json`, otherwise
 * form-encoded (keys sorted, as GitHub's Rails `to_query` writes them).
 */
async function accessToken(ctx: SimContext, request: FastifyRequest, reply: FastifyReply) {
  const body = exchangeCode(ctx, tokenParams(request));
  reply.code(200);
  if (acceptsJson(request.headers.accept)) return reply.type('application/json; charset=utf-8').send(body);
  const form = new URLSearchParams(
    Object.entries(body)
      .map(([name, value]): [string, string] => [name, String(value)])
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  return reply.type('application/x-www-form-urlencoded; charset=utf-8').send(form.toString());
}

/** Register with `{ prefix: OAUTH_PATH }`: GitHub's OAuth web flow for the App's user access tokens. */
export async function oauthPlugin(instance: FastifyInstance, options: { ctx: SimContext }): Promise<void> {
  const { ctx } = options;
  // Bodies stay text: the token endpoint reads form-encoded and JSON bodies itself.
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  installRequestTracking(instance, ctx, null);

  instance.get('/authorize', (request, reply) => authorize(ctx, request, reply));
  instance.post('/access_token', (request, reply) => accessToken(ctx, request, reply));
}
