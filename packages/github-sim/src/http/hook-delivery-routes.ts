import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GitHubApiError, notFound, validationFailed } from '../github-error.js';
import { hookDeliveryItemPayload, hookDeliveryPayload } from '../payloads/hook-delivery-payload.js';
import type { SimContext } from '../sim-context.js';
import type { WebhookDeliveryRecord } from '../types.js';
import { redeliverWebhook } from '../webhook-redelivery.js';
import { idParam } from './json-body.js';
import { requireApp, requireRepository } from './request-auth.js';

const DOCS = {
  listRepo: 'https://docs.github.com/rest/repos/webhooks#list-deliveries-for-a-repository-webhook',
  getRepo: 'https://docs.github.com/rest/repos/webhooks#get-a-delivery-for-a-repository-webhook',
  redeliverRepo: 'https://docs.github.com/rest/repos/webhooks#redeliver-a-delivery-for-a-repository-webhook',
  listApp: 'https://docs.github.com/rest/apps/webhooks#list-deliveries-for-an-app-webhook',
  getApp: 'https://docs.github.com/rest/apps/webhooks#get-a-delivery-for-an-app-webhook',
  redeliverApp: 'https://docs.github.com/rest/apps/webhooks#redeliver-a-delivery-for-an-app-webhook',
};

/** GitHub keeps a hook's deliveries for 3 days, then they are gone from these endpoints. */
const KEPT_MS = 3 * 24 * 3_600_000;

type ListQuery = { per_page?: string; cursor?: string; status?: string };
type RepoHookParams = { owner: string; repo: string; hook_id: string };

/**
 * One page of deliveries, newest first, with GitHub's cursor pagination: the `Link` header's
 * `next` names the first delivery of the next page as `cursor=v1_<delivery id>`.
 * `status=success` keeps status codes 200–399, `failure` 400–599 — so a delivery that got no
 * answer at all (`status_code` 0) is in neither, as on GitHub.
 */
function listPage(
  ctx: SimContext,
  request: FastifyRequest<{ Querystring: ListQuery }>,
  reply: FastifyReply,
  deliveries: WebhookDeliveryRecord[],
  docs: string,
) {
  const { per_page, cursor, status } = request.query;
  if (status !== undefined && status !== 'success' && status !== 'failure') {
    throw validationFailed(docs, { resource: 'HookDelivery', code: 'invalid', field: 'status' });
  }
  const perPage = Math.min(100, Math.max(1, Number(per_page ?? 30) || 30));
  let startId = Number.POSITIVE_INFINITY;
  if (cursor !== undefined && cursor !== '') {
    const match = /^v1_(\d{1,16})$/.exec(cursor);
    if (match === null) throw new GitHubApiError(400, 'Bad request: invalid cursor', docs);
    startId = Number(match[1]);
  }
  const oldest = ctx.clock.now().getTime() - KEPT_MS;
  const kept = deliveries
    .filter((d) => Date.parse(d.deliveredAt) >= oldest)
    .filter((d) => {
      if (status === undefined) return true;
      const code = d.status ?? 0;
      return status === 'success' ? code >= 200 && code < 400 : code >= 400 && code < 600;
    })
    .filter((d) => d.id <= startId)
    .sort((a, b) => b.id - a.id);
  const page = kept.slice(0, perPage);
  const next = kept[perPage];
  if (next !== undefined) {
    const url = new URL(request.url, ctx.urls.base);
    url.searchParams.set('per_page', String(perPage));
    url.searchParams.set('cursor', `v1_${next.id}`);
    reply.header('link', `<${url.toString()}>; rel="next"`);
  }
  return page.map(hookDeliveryItemPayload);
}

/** Redelivers after the response has gone out: GitHub answers 202 before it sends. */
function redeliverAfterResponse(
  ctx: SimContext,
  reply: FastifyReply,
  delivery: { guid: string; hookId: number },
): void {
  reply.raw.once('finish', () => {
    redeliverWebhook(ctx, delivery.guid, delivery.hookId).catch(() => undefined);
  });
}

/**
 * Deliveries of repository hooks (installation token, `repository_hooks` read to list, write to
 * redeliver) and of the App's hook (the App's JWT).
 * https://docs.github.com/rest/repos/webhooks, https://docs.github.com/rest/apps/webhooks
 */
export function registerHookDeliveryRoutes(api: FastifyInstance, ctx: SimContext): void {
  const repositoryHookDeliveries = async (
    request: FastifyRequest<{ Params: RepoHookParams }>,
    level: 'read' | 'write',
    docs: string,
  ) => {
    const { repo } = await requireRepository(ctx, request, 'repository_hooks', level, docs);
    const hookId = idParam(request.params.hook_id);
    const hook = hookId === null ? undefined : ctx.state.hooks.get(hookId);
    if (hook === undefined || hook.repositoryId !== repo.id) throw notFound(docs);
    return ctx.state.deliveries.filter((d) => d.hookType === 'repository' && d.hookId === hook.id);
  };
  const appHookDeliveries = async (request: FastifyRequest, docs: string) => {
    const app = await requireApp(ctx, request, docs);
    return ctx.state.deliveries.filter((d) => d.hookType === 'app' && d.hookId === app.hookId);
  };
  const findDelivery = (deliveries: WebhookDeliveryRecord[], rawId: string, docs: string) => {
    const id = idParam(rawId);
    const delivery = id === null ? undefined : deliveries.find((d) => d.id === id);
    if (delivery === undefined) throw notFound(docs);
    return delivery;
  };

  api.get<{ Params: RepoHookParams; Querystring: ListQuery }>(
    '/repos/:owner/:repo/hooks/:hook_id/deliveries',
    async (request, reply) =>
      listPage(
        ctx,
        request,
        reply,
        await repositoryHookDeliveries(request, 'read', DOCS.listRepo),
        DOCS.listRepo,
      ),
  );
  api.get<{ Params: RepoHookParams & { delivery_id: string } }>(
    '/repos/:owner/:repo/hooks/:hook_id/deliveries/:delivery_id',
    async (request) => {
      const deliveries = await repositoryHookDeliveries(request, 'read', DOCS.getRepo);
      return hookDeliveryPayload(findDelivery(deliveries, request.params.delivery_id, DOCS.getRepo));
    },
  );
  api.post<{ Params: RepoHookParams & { delivery_id: string } }>(
    '/repos/:owner/:repo/hooks/:hook_id/deliveries/:delivery_id/attempts',
    async (request, reply) => {
      const deliveries = await repositoryHookDeliveries(request, 'write', DOCS.redeliverRepo);
      const delivery = findDelivery(deliveries, request.params.delivery_id, DOCS.redeliverRepo);
      redeliverAfterResponse(ctx, reply, delivery);
      return reply.code(202).send({});
    },
  );

  api.get<{ Querystring: ListQuery }>('/app/hook/deliveries', async (request, reply) =>
    listPage(ctx, request, reply, await appHookDeliveries(request, DOCS.listApp), DOCS.listApp),
  );
  api.get<{ Params: { delivery_id: string } }>('/app/hook/deliveries/:delivery_id', async (request) => {
    const deliveries = await appHookDeliveries(request, DOCS.getApp);
    return hookDeliveryPayload(findDelivery(deliveries, request.params.delivery_id, DOCS.getApp));
  });
  api.post<{ Params: { delivery_id: string } }>(
    '/app/hook/deliveries/:delivery_id/attempts',
    async (request, reply) => {
      const deliveries = await appHookDeliveries(request, DOCS.redeliverApp);
      const delivery = findDelivery(deliveries, request.params.delivery_id, DOCS.redeliverApp);
      redeliverAfterResponse(ctx, reply, delivery);
      return reply.code(202).send({});
    },
  );
}
