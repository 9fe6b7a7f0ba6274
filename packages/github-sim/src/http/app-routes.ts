import type { FastifyInstance } from 'fastify';
import { redeemManifestCode } from '../app-manifests.js';
import { notFound } from '../github-error.js';
import { CREATE_TOKEN_DOCUMENTATION_URL, createInstallationToken } from '../installation-tokens.js';
import { appPayload } from '../payloads/app-payload.js';
import { installationPayload } from '../payloads/installation-payload.js';
import type { SimContext } from '../sim-context.js';
import type { AppRecord } from '../sim-state.js';
import { idParam, jsonBody } from './json-body.js';
import { type PageQuery, paginate } from './pagination.js';
import { requireApp } from './request-auth.js';

const DOCS = {
  getApp: 'https://docs.github.com/rest/apps/apps#get-the-authenticated-app',
  listInstallations: 'https://docs.github.com/rest/apps/apps#list-installations-for-the-authenticated-app',
  getInstallation: 'https://docs.github.com/rest/apps/apps#get-an-installation-for-the-authenticated-app',
  getRepoInstallation:
    'https://docs.github.com/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app',
  createFromManifest: 'https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest',
};

/** The endpoints an App calls with its JWT: each sees its own installations only. */
export function registerAppRoutes(api: FastifyInstance, ctx: SimContext): void {
  const liveInstallations = (app: AppRecord) =>
    [...ctx.state.installations.values()].filter((i) => !i.deleted && i.appId === app.id);
  const installationOf = (app: AppRecord, rawId: string) => {
    const id = idParam(rawId);
    const installation = id === null ? undefined : ctx.state.liveInstallation(id);
    return installation?.appId === app.id ? installation : undefined;
  };

  api.get('/app', async (request) => {
    const app = await requireApp(ctx, request, DOCS.getApp);
    return appPayload(app, liveInstallations(app).length, ctx.urls);
  });

  api.get<{ Querystring: PageQuery }>('/app/installations', async (request, reply) => {
    const app = await requireApp(ctx, request, DOCS.listInstallations);
    return paginate(ctx, request, reply, liveInstallations(app)).map((installation) =>
      installationPayload(installation, app, ctx.urls),
    );
  });

  api.get<{ Params: { installation_id: string } }>('/app/installations/:installation_id', async (request) => {
    const app = await requireApp(ctx, request, DOCS.getInstallation);
    const installation = installationOf(app, request.params.installation_id);
    if (installation === undefined) throw notFound(DOCS.getInstallation);
    return installationPayload(installation, app, ctx.urls);
  });

  api.post<{ Params: { installation_id: string } }>(
    '/app/installations/:installation_id/access_tokens',
    async (request, reply) => {
      const app = await requireApp(ctx, request, CREATE_TOKEN_DOCUMENTATION_URL);
      const installation = installationOf(app, request.params.installation_id);
      if (installation === undefined) throw notFound(CREATE_TOKEN_DOCUMENTATION_URL);
      const body = jsonBody(request, CREATE_TOKEN_DOCUMENTATION_URL);
      return reply.code(201).send(createInstallationToken(ctx, installation, body));
    },
  );

  api.get<{ Params: { owner: string; repo: string } }>(
    '/repos/:owner/:repo/installation',
    async (request) => {
      const app = await requireApp(ctx, request, DOCS.getRepoInstallation);
      const repo = ctx.state.findRepository(request.params.owner, request.params.repo);
      const installation = repo === undefined ? undefined : ctx.state.installationOfRepository(repo, app.id);
      if (installation === undefined) throw notFound(DOCS.getRepoInstallation);
      return installationPayload(installation, app, ctx.urls);
    },
  );

  // The manifest flow's last step needs no credentials: the one-time code is the proof.
  api.post<{ Params: { code: string } }>('/app-manifests/:code/conversions', async (request, reply) => {
    const app = redeemManifestCode(ctx, request.params.code);
    if (app === undefined) throw notFound(DOCS.createFromManifest);
    return reply.code(201).send({
      ...appPayload(app, liveInstallations(app).length, ctx.urls),
      client_id: app.clientId,
      client_secret: app.clientSecret,
      webhook_secret: app.webhookSecret,
      pem: app.privateKeyPem,
    });
  });
}
