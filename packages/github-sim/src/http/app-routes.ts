import type { FastifyInstance } from 'fastify';
import { notFound } from '../github-error.js';
import { CREATE_TOKEN_DOCUMENTATION_URL, createInstallationToken } from '../installation-tokens.js';
import { appPayload } from '../payloads/app-payload.js';
import { installationPayload } from '../payloads/installation-payload.js';
import { DEFAULT_PERMISSIONS, type SimContext } from '../sim-context.js';
import { idParam, jsonBody } from './json-body.js';
import { type PageQuery, paginate } from './pagination.js';
import { requireApp } from './request-auth.js';

const DOCS = {
  getApp: 'https://docs.github.com/rest/apps/apps#get-the-authenticated-app',
  listInstallations: 'https://docs.github.com/rest/apps/apps#list-installations-for-the-authenticated-app',
  getInstallation: 'https://docs.github.com/rest/apps/apps#get-an-installation-for-the-authenticated-app',
  getRepoInstallation:
    'https://docs.github.com/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app',
};

/** The endpoints an App calls with its JWT. */
export function registerAppRoutes(api: FastifyInstance, ctx: SimContext): void {
  const liveInstallations = () => [...ctx.state.installations.values()].filter((i) => !i.deleted);

  api.get('/app', async (request) => {
    await requireApp(ctx, request, DOCS.getApp);
    return appPayload(ctx.app, ctx.appOwner, DEFAULT_PERMISSIONS, liveInstallations().length, ctx.urls);
  });

  api.get<{ Querystring: PageQuery }>('/app/installations', async (request, reply) => {
    await requireApp(ctx, request, DOCS.listInstallations);
    return paginate(ctx, request, reply, liveInstallations()).map((installation) =>
      installationPayload(installation, ctx.app, ctx.urls),
    );
  });

  api.get<{ Params: { installation_id: string } }>('/app/installations/:installation_id', async (request) => {
    await requireApp(ctx, request, DOCS.getInstallation);
    const id = idParam(request.params.installation_id);
    const installation = id === null ? undefined : ctx.state.liveInstallation(id);
    if (installation === undefined) throw notFound(DOCS.getInstallation);
    return installationPayload(installation, ctx.app, ctx.urls);
  });

  api.post<{ Params: { installation_id: string } }>(
    '/app/installations/:installation_id/access_tokens',
    async (request, reply) => {
      await requireApp(ctx, request, CREATE_TOKEN_DOCUMENTATION_URL);
      const id = idParam(request.params.installation_id);
      const installation = id === null ? undefined : ctx.state.liveInstallation(id);
      if (installation === undefined) throw notFound(CREATE_TOKEN_DOCUMENTATION_URL);
      const body = jsonBody(request, CREATE_TOKEN_DOCUMENTATION_URL);
      return reply.code(201).send(createInstallationToken(ctx, installation, body));
    },
  );

  api.get<{ Params: { owner: string; repo: string } }>(
    '/repos/:owner/:repo/installation',
    async (request) => {
      await requireApp(ctx, request, DOCS.getRepoInstallation);
      const repo = ctx.state.findRepository(request.params.owner, request.params.repo);
      const installation = repo === undefined ? undefined : ctx.state.installationOfRepository(repo);
      if (installation === undefined) throw notFound(DOCS.getRepoInstallation);
      return installationPayload(installation, ctx.app, ctx.urls);
    },
  );
}
