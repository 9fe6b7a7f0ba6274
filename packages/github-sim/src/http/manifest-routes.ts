import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { nameProblem, parseManifest, registerManifestApp } from '../app-manifests.js';
import { manifestCodePage, manifestReviewPage, manifestSignInPage } from '../manifest-pages.js';
import { errorPage } from '../oauth-pages.js';
import { addMembership } from '../org-members.js';
import { withQuery } from '../redirect-uri.js';
import type { SimContext } from '../sim-context.js';
import { SimInputError } from '../sim-input-error.js';
import type { AccountRecord } from '../sim-state.js';
import type { GitHubSimulator } from '../simulator-api.js';
import { acceptForms, sendPage, userLogins } from './web-pages.js';

type ManifestForm = { manifest?: string; state?: string; login?: string; name?: string; confirm?: string };
type ManifestRequest = FastifyRequest<{
  Params: { org?: string };
  Querystring: { state?: string };
  Body: ManifestForm | undefined;
}>;

/**
 * `/settings/apps/new` (an App of the signed-in user) and `/organizations/{org}/settings/apps/new`
 * (an App of an organisation the user is a member of): the manifest flow's pages on the web host
 * (see app-manifests.ts). The browser posts the form field `manifest`, and optionally `state` in
 * the query; the page shows what the manifest asks for with the name to register it under, and
 * "Create GitHub App" registers it and sends the browser to `redirect_url?code=…&state=…`.
 *
 * The simulator has no way to create organisations, so an organisation nobody installed on yet is
 * created here, the signed-in user its member; an existing one admits its members only (404).
 */
export function manifestPlugin(
  instance: FastifyInstance,
  options: { ctx: SimContext; sim: GitHubSimulator },
  done: () => void,
): void {
  const { ctx, sim } = options;
  acceptForms(instance, 64 * 1024);
  const html = sendPage;
  const users = () => userLogins(ctx);

  /** The organisation the App is for, or null when the user may not register Apps for it. */
  const organisationFor = (login: string, user: AccountRecord): AccountRecord | null => {
    const existing = ctx.state.accounts.get(login.toLowerCase());
    if (existing === undefined) {
      const created = ctx.state.getOrCreateAccount(login, 'Organization');
      addMembership(ctx, created, user);
      return created;
    }
    const member = ctx.state.orgMembers.get(existing.id)?.has(user.id) ?? false;
    return existing.type === 'Organization' && member ? existing : null;
  };

  const handle = async (request: ManifestRequest, reply: FastifyReply) => {
    const form = request.body ?? {};
    const state = request.query.state ?? form.state ?? null;
    const manifestJson = form.manifest ?? '';
    const parsed = parseManifest(form.manifest);
    if (!parsed.ok) return html(reply, 400, errorPage('Invalid GitHub App manifest', parsed.problem));
    const { manifest } = parsed;
    const action = request.url;

    if (form.login) {
      try {
        sim.signIn(form.login);
      } catch (error) {
        if (!(error instanceof SimInputError)) throw error;
        return html(
          reply,
          400,
          manifestSignInPage({ action, manifestJson, state, users: users(), problem: error.message }),
        );
      }
    }
    const user = ctx.state.signedInUser;
    if (user === null)
      return html(reply, 200, manifestSignInPage({ action, manifestJson, state, users: users() }));

    const org = request.params.org;
    const owner = org === undefined ? user : organisationFor(org, user);
    if (owner === null)
      return html(reply, 404, errorPage('Not Found', `You cannot register Apps for ${org}.`));

    const name = form.name ?? manifest.name ?? '';
    const review = (status: number, problem?: string) =>
      html(
        reply,
        status,
        manifestReviewPage({
          action,
          manifestJson,
          manifest,
          state,
          owner: owner.login,
          name,
          ...(problem === undefined ? {} : { problem }),
        }),
      );
    if (form.confirm !== 'create') return review(200);
    const problem = nameProblem(ctx, name);
    if (problem !== null) return review(422, problem);

    const { app, code } = registerManifestApp(ctx, { manifest, name, owner });
    if (manifest.redirectUrl === null) return html(reply, 201, manifestCodePage({ appName: app.name, code }));
    const location = withQuery(manifest.redirectUrl, { code, ...(state === null ? {} : { state }) });
    return reply.code(302).header('location', location).send();
  };

  const onlyPost = (_request: FastifyRequest, reply: FastifyReply) =>
    html(
      reply,
      400,
      errorPage(
        'Register a GitHub App',
        'The simulator registers GitHub Apps from a manifest only: POST the form field "manifest" here.',
      ),
    );
  for (const path of ['/settings/apps/new', '/organizations/:org/settings/apps/new']) {
    instance.get(path, onlyPost);
    instance.post(path, handle);
  }
  done();
}
