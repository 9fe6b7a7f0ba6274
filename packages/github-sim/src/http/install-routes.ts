import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorPage, installedPage, installPage } from '../oauth-pages.js';
import type { SimContext } from '../sim-context.js';
import { SimInputError } from '../sim-input-error.js';
import type { GitHubSimulator } from '../simulator-api.js';

/**
 * `/apps/<slug>/installations/new`: the App's public install page, as a person finds it on
 * github.com. The signed-in user installs the App on their own account with the repositories they
 * name; the simulator then sends `installation.created` to the App's webhook like GitHub does, and
 * offers the way back to the App's web site (the origin of its webhook URL, standing in for the
 * App's "Setup URL"). Nobody signed in: the page says so and lists who can sign in.
 * https://docs.github.com/apps/using-github-apps/installing-a-github-app-from-a-third-party
 */
export function installPlugin(
  instance: FastifyInstance,
  options: { ctx: SimContext; sim: GitHubSimulator },
  done: () => void,
): void {
  const { ctx, sim } = options;
  instance.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 16 * 1024 },
    (_request, body, parsed) => parsed(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );
  const html = (reply: FastifyReply, status: number, body: string) =>
    reply.code(status).type('text/html; charset=utf-8').send(body);
  const known = (request: FastifyRequest<{ Params: { slug: string } }>, reply: FastifyReply) => {
    if (request.params.slug === ctx.app.slug) return true;
    html(reply, 404, errorPage('Not Found', `There is no GitHub App called ${request.params.slug}.`));
    return false;
  };
  const action = () => `/apps/${ctx.app.slug}/installations/new`;
  const users = () => [...ctx.state.accounts.values()].filter((a) => a.type === 'User').map((a) => a.login);

  instance.get<{ Params: { slug: string }; Querystring: { login?: string } }>(
    '/:slug/installations/new',
    async (request, reply) => {
      if (!known(request, reply)) return reply;
      if (request.query.login) {
        try {
          sim.signIn(request.query.login);
        } catch (error) {
          if (!(error instanceof SimInputError)) throw error;
          return html(reply, 400, errorPage('Cannot sign in', error.message));
        }
      }
      const user = ctx.state.signedInUser;
      return html(
        reply,
        200,
        installPage({ appName: ctx.app.name, action: action(), user: user?.login ?? null, users: users() }),
      );
    },
  );

  instance.post<{ Params: { slug: string }; Body: { repositories?: string } }>(
    '/:slug/installations/new',
    async (request, reply) => {
      if (!known(request, reply)) return reply;
      const user = ctx.state.signedInUser;
      if (!user) return html(reply, 401, errorPage('Sign in first', 'Nobody is signed in to GitHub.'));
      const names = (request.body?.repositories ?? '')
        .split(/[\s,]+/)
        .map((name) => name.trim())
        .filter(Boolean);
      const page = (problem: string) =>
        installPage({ appName: ctx.app.name, action: action(), user: user.login, users: users(), problem });
      if (names.length === 0) return html(reply, 400, page('Name at least one repository.'));
      try {
        const change = await sim.createInstallation({
          account: { login: user.login, type: 'User' },
          repositories: names,
          sender: { login: user.login },
        });
        const site = ctx.app.webhookUrl ? new URL(ctx.app.webhookUrl).origin : null;
        return html(
          reply,
          201,
          installedPage({
            appName: ctx.app.name,
            account: user.login,
            repositories: change.repositories.map((r) => r.full_name),
            returnTo: site,
          }),
        );
      } catch (error) {
        if (error instanceof SimInputError) return html(reply, 400, page(error.message));
        throw error;
      }
    },
  );
  done();
}
