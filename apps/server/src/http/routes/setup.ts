import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { appNameProblem, defaultAppName, isGitHubLogin } from '../../domain/app-manifest.js';
import { SETUP_SESSION_LIFETIME_MS, setupCookieName } from '../../security/setup-secrets.js';
import {
  BODY_PROBLEMS,
  problems,
  SetupManifestRequestSchema,
  SetupManifestSchema,
  SetupStatusSchema,
} from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { checkSameOrigin } from '../authenticate.js';
import { readCookie, setCookie } from '../cookies.js';
import { HttpError } from '../problem.js';
import type { ProblemCode } from '../problem-codes.js';

/**
 * Setup mode's routes (setup/app-setup.ts does the work):
 *
 *   GET  /setup?code=…        the URL `zekt serve` prints: a right code gives this browser a setup
 *                             session (cookie) and comes back to /setup without the code in the URL
 *   GET  /setup               the console's first-run page
 *   GET  /api/setup           what the page shows: setup mode or not, this browser's session, the App
 *   POST /api/setup/manifest  the manifest and GitHub's form action (with a fresh `state`)
 *   GET  /setup/callback      the manifest's redirect_url: GitHub sends the browser back with code
 *                             and state; the App is converted and stored, then back to /setup
 *
 * A browser navigating (Accept: text/html) that is refused goes back to /setup?problem=<code>,
 * which the page explains; any other client gets the problem as JSON.
 */
export function registerSetupRoutes(
  app: App,
  context: Pick<AppContext, 'setup' | 'baseUrl' | 'githubWebUrl'> & {
    consolePage: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;
  },
): void {
  const secure = context.baseUrl.startsWith('https://');
  const cookie = setupCookieName(secure);
  const origin = new URL(context.baseUrl).origin;
  const sessionOf = (request: FastifyRequest) => readCookie(request, cookie);
  const wantsPage = (request: FastifyRequest) => (request.headers.accept ?? '').includes('text/html');
  const refuse = (
    request: FastifyRequest,
    reply: FastifyReply,
    code: ProblemCode,
    detail: string,
  ): FastifyReply => {
    if (wantsPage(request)) return reply.redirect(`/setup?problem=${code}`, 303);
    throw new HttpError(code, detail);
  };

  app.get(
    '/setup',
    {
      schema: {
        summary: 'The first-run page; with `?code=` (the setup URL), starts this browser’s setup session',
        tags: ['setup'],
        querystring: Type.Object({ code: Type.Optional(Type.String({ maxLength: 200 })) }),
        response: problems('invalid_setup_code', 'app_already_configured', 'console_not_built'),
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const { code } = request.query;
      if (code === undefined) return context.consolePage(request, reply);
      const opened = await context.setup.openSession(code);
      if (opened.outcome === 'refused') {
        // Configured already: the page says so, whoever asks.
        if (opened.code === 'app_already_configured' && wantsPage(request)) {
          return reply.redirect('/setup', 303);
        }
        return refuse(request, reply, opened.code, opened.detail);
      }
      return setCookie(reply, cookie, opened.sessionValue, {
        maxAge: SETUP_SESSION_LIFETIME_MS / 1000,
        secure,
      }).redirect('/setup', 303);
    },
  );

  app.get(
    '/api/setup',
    {
      schema: {
        summary: 'Setup mode: whether a GitHub App is configured, and (for a setup session) which',
        tags: ['setup'],
        response: { 200: SetupStatusSchema, ...problems() },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return {
        ...(await context.setup.status(sessionOf(request))),
        githubUrl: context.githubWebUrl,
        defaultName: defaultAppName(context.baseUrl),
      };
    },
  );

  app.post(
    '/api/setup/manifest',
    {
      schema: {
        summary: 'Starts registering the GitHub App: the manifest and where the browser posts it',
        tags: ['setup'],
        body: SetupManifestRequestSchema,
        response: {
          200: SetupManifestSchema,
          ...problems(BODY_PROBLEMS, 'csrf_rejected', 'setup_session_required', 'app_already_configured'),
        },
      },
    },
    async (request, reply) => {
      // The setup session is a cookie: a change made with it must come from Zekt's own page.
      checkSameOrigin(request, origin);
      const { account, organization, name } = request.body;
      const nameProblem = appNameProblem(name);
      if (nameProblem !== null) throw new HttpError('invalid_request', `name: ${nameProblem}`);
      if (account === 'organization' && (organization === undefined || !isGitHubLogin(organization))) {
        throw new HttpError(
          'invalid_request',
          'organization: give the login of the organisation the App is registered for (letters, digits and inner hyphens)',
        );
      }
      const started = await context.setup.startRegistration(sessionOf(request), {
        owner:
          account === 'user' ? { kind: 'user' } : { kind: 'organization', login: organization as string },
        name,
        public: request.body.public,
      });
      if (started.outcome === 'refused') throw new HttpError(started.code, started.detail);
      reply.header('cache-control', 'no-store');
      return { action: started.action, manifest: JSON.stringify(started.manifest) };
    },
  );

  app.get(
    '/setup/callback',
    {
      schema: {
        summary:
          'The manifest’s redirect_url: GitHub sends the browser back with the App’s code and the state',
        tags: ['setup'],
        querystring: Type.Object({
          code: Type.Optional(Type.String({ maxLength: 200 })),
          state: Type.Optional(Type.String({ maxLength: 200 })),
        }),
        response: problems(
          'invalid_setup_state',
          'setup_session_required',
          'app_already_configured',
          'manifest_code_rejected',
          'github_unavailable',
        ),
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const { code, state } = request.query;
      const finished = await context.setup.finishRegistration(sessionOf(request), { code, state });
      if (finished.outcome === 'refused') return refuse(request, reply, finished.code, finished.detail);
      if (finished.outcome === 'conversion_failed') {
        const code = finished.reason === 'rejected' ? 'manifest_code_rejected' : 'github_unavailable';
        return refuse(request, reply, code, `GitHub did not hand over the App: ${finished.detail}`);
      }
      request.log.info(
        { appId: finished.app.appId, slug: finished.app.slug },
        'GitHub App registered through setup',
      );
      return reply.redirect('/setup', 303);
    },
  );
}
