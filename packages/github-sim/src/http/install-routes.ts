import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorPage, installedPage, installPage } from '../oauth-pages.js';
import { withQuery } from '../redirect-uri.js';
import type { SimContext } from '../sim-context.js';
import { SimInputError } from '../sim-input-error.js';
import type { AppRecord } from '../sim-state.js';
import type { GitHubSimulator } from '../simulator-api.js';
import { acceptForms, sendPage, userLogins } from './web-pages.js';

/**
 * `/apps/<slug>/installations/new`: an App's public install page, as a person finds it on
 * github.com. The signed-in user installs the App on their own account with the repositories they
 * name; the simulator then sends `installation.created` to the App's webhook like GitHub does.
 * Then, like GitHub, it sends the browser to the App's Setup URL (with `installation_id` and
 * `setup_action=install`) when the App has one, else it shows what was installed with a link back
 * to the App's site (the origin of its webhook URL). A private App installs only on its owner's
 * account. Nobody signed in: the page says so and lists who can sign in.
 * https://docs.github.com/apps/using-github-apps/installing-a-github-app-from-a-third-party
 */
export function installPlugin(
  instance: FastifyInstance,
  options: { ctx: SimContext; sim: GitHubSimulator },
  done: () => void,
): void {
  const { ctx, sim } = options;
  acceptForms(instance, 16 * 1024);
  const html = sendPage;
  const known = (request: FastifyRequest<{ Params: { slug: string } }>, reply: FastifyReply) => {
    const app = ctx.state.findAppBySlug(request.params.slug);
    if (app === undefined) {
      html(reply, 404, errorPage('Not Found', `There is no GitHub App called ${request.params.slug}.`));
    }
    return app;
  };
  const action = (app: AppRecord) => `/apps/${app.slug}/installations/new`;
  const users = () => userLogins(ctx);

  instance.get<{ Params: { slug: string }; Querystring: { login?: string } }>(
    '/:slug/installations/new',
    async (request, reply) => {
      const app = known(request, reply);
      if (app === undefined) return reply;
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
        installPage({ appName: app.name, action: action(app), user: user?.login ?? null, users: users() }),
      );
    },
  );

  instance.post<{ Params: { slug: string }; Body: { repositories?: string } }>(
    '/:slug/installations/new',
    async (request, reply) => {
      const app = known(request, reply);
      if (app === undefined) return reply;
      const user = ctx.state.signedInUser;
      if (!user) return html(reply, 401, errorPage('Sign in first', 'Nobody is signed in to GitHub.'));
      const names = (request.body?.repositories ?? '')
        .split(/[\s,]+/)
        .map((name) => name.trim())
        .filter(Boolean);
      const page = (problem: string) =>
        installPage({ appName: app.name, action: action(app), user: user.login, users: users(), problem });
      if (names.length === 0) return html(reply, 400, page('Name at least one repository.'));
      try {
        const change = await sim.createInstallation({
          account: { login: user.login, type: 'User' },
          repositories: names,
          sender: { login: user.login },
          app: app.slug,
        });
        if (app.setupUrl !== null) {
          const location = withQuery(app.setupUrl, {
            installation_id: String(change.installation.id),
            setup_action: 'install',
          });
          return reply.code(302).header('location', location).send();
        }
        const site = app.webhookUrl ? new URL(app.webhookUrl).origin : null;
        return html(
          reply,
          201,
          installedPage({
            appName: app.name,
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
