import type { FastifyInstance } from 'fastify';
import { installationsOfUser } from '../org-members.js';
import { installationPayload } from '../payloads/installation-payload.js';
import { privateUserPayload } from '../payloads/private-user-payload.js';
import type { SimContext } from '../sim-context.js';
import { type PageQuery, paginate } from './pagination.js';
import { requireUser } from './request-auth.js';

const DOCS = {
  getAuthenticated: 'https://docs.github.com/rest/users/users#get-the-authenticated-user',
  listInstallations:
    'https://docs.github.com/rest/apps/installations#list-app-installations-accessible-to-the-user-access-token',
};

/** The endpoints a user access token (`ghu_…`, from the OAuth web flow) calls. */
export function registerUserRoutes(api: FastifyInstance, ctx: SimContext): void {
  api.get('/user', async (request) => {
    // An App JWT or installation token has no user behind it.
    const { user } = await requireUser(
      ctx,
      request,
      DOCS.getAuthenticated,
      'Resource not accessible by integration',
    );
    return privateUserPayload(user, ctx.state.repositories.values(), ctx.urls);
  });

  api.get<{ Querystring: PageQuery }>('/user/installations', async (request, reply) => {
    const { user, token } = await requireUser(
      ctx,
      request,
      DOCS.listInstallations,
      'You must authenticate with an access token authorized to a GitHub App in order to list installations',
    );
    // The installations of the App the user authorized, not of every App.
    const installations = installationsOfUser(ctx, user).filter((i) => i.appId === token.appId);
    return {
      total_count: installations.length,
      installations: paginate(ctx, request, reply, installations).map((installation) =>
        installationPayload(installation, ctx.state.appOf(installation), ctx.urls),
      ),
    };
  });
}
