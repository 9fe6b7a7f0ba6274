import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound, validationFailed } from '../github-error.js';
import {
  CREATE_HOOK_DOCUMENTATION_URL,
  hookRequestBody,
  UPDATE_HOOK_DOCUMENTATION_URL,
  validateHookActive,
  validateHookConfig,
  validateHookEvents,
} from '../hook-validation.js';
import { hookPayload } from '../payloads/hook-payload.js';
import { sendPing } from '../repository-webhooks.js';
import type { SimContext } from '../sim-context.js';
import type { HookRecord, RepositoryRecord } from '../sim-state.js';
import { idParam, jsonBody } from './json-body.js';
import { requireRepository } from './request-auth.js';

const DOCS = {
  list: 'https://docs.github.com/rest/repos/webhooks#list-repository-webhooks',
  get: 'https://docs.github.com/rest/repos/webhooks#get-a-repository-webhook',
  delete: 'https://docs.github.com/rest/repos/webhooks#delete-a-repository-webhook',
  ping: 'https://docs.github.com/rest/repos/webhooks#ping-a-repository-webhook',
};

type RepoParams = { Params: { owner: string; repo: string } };
type HookParams = { Params: { owner: string; repo: string; hook_id: string } };

/** Delivers after the response has gone out, as GitHub pings a new hook asynchronously. */
function afterResponse(reply: FastifyReply, send: () => Promise<unknown>): void {
  reply.raw.once('finish', () => {
    send().catch(() => undefined);
  });
}

function overlaps(a: string[], b: string[]): boolean {
  return a.includes('*') || b.includes('*') || a.some((event) => b.includes(event));
}

/**
 * Repository webhooks (`repository_hooks` permission: read to list/get, write to change).
 * https://docs.github.com/rest/repos/webhooks
 */
export function registerHookRoutes(api: FastifyInstance, ctx: SimContext): void {
  const findHook = (repo: RepositoryRecord, rawId: string, docs: string): HookRecord => {
    const id = idParam(rawId);
    const hook = id === null ? undefined : ctx.state.hooks.get(id);
    if (hook === undefined || hook.repositoryId !== repo.id) throw notFound(docs);
    return hook;
  };
  const repoFor = async (request: FastifyRequest, level: 'read' | 'write', docs: string) => {
    const { repo } = await requireRepository(ctx, request, 'repository_hooks', level, docs);
    return repo;
  };

  api.post<RepoParams>('/repos/:owner/:repo/hooks', async (request, reply) => {
    const docs = CREATE_HOOK_DOCUMENTATION_URL;
    const repo = await repoFor(request, 'write', docs);
    const body = hookRequestBody(jsonBody(request, docs), docs);
    if (body.name !== undefined && body.name !== 'web') {
      throw validationFailed(docs, { resource: 'Hook', code: 'invalid', field: 'name' });
    }
    const config = validateHookConfig(body.config ?? {}, ctx.allowPrivateHookUrls, docs);
    const events =
      body.events === undefined ? ['push'] : validateHookEvents(body.events, 'properties/events', docs);
    const active = body.active === undefined ? true : validateHookActive(body.active, docs);
    for (const existing of ctx.state.hooksOfRepository(repo.id)) {
      if (existing.config.url === config.url && overlaps(existing.events, events)) {
        throw validationFailed(docs, {
          resource: 'Hook',
          code: 'custom',
          message: 'Hook already exists on this repository',
        });
      }
    }
    const now = ctx.clock.now();
    const hook: HookRecord = {
      id: ctx.ids.hook(),
      repositoryId: repo.id,
      active,
      events,
      config,
      createdAt: now,
      updatedAt: now,
      lastResponse: { code: null, status: 'unused', message: null },
    };
    ctx.state.hooks.set(hook.id, hook);
    afterResponse(reply, () => sendPing(ctx, hook, repo));
    const payload = hookPayload(hook, repo, ctx.urls);
    return reply.code(201).header('location', payload.url).send(payload);
  });

  api.get<RepoParams>('/repos/:owner/:repo/hooks', async (request) => {
    const repo = await repoFor(request, 'read', DOCS.list);
    return ctx.state.hooksOfRepository(repo.id).map((hook) => hookPayload(hook, repo, ctx.urls));
  });

  api.get<HookParams>('/repos/:owner/:repo/hooks/:hook_id', async (request) => {
    const repo = await repoFor(request, 'read', DOCS.get);
    return hookPayload(findHook(repo, request.params.hook_id, DOCS.get), repo, ctx.urls);
  });

  api.patch<HookParams>('/repos/:owner/:repo/hooks/:hook_id', async (request) => {
    const docs = UPDATE_HOOK_DOCUMENTATION_URL;
    const repo = await repoFor(request, 'write', docs);
    const hook = findHook(repo, request.params.hook_id, docs);
    const body = hookRequestBody(jsonBody(request, docs), docs);
    // `config` replaces the whole configuration: "If you previously had a secret set, you must
    // provide the same secret or set a new secret or the secret will be removed."
    const config =
      body.config === undefined
        ? hook.config
        : validateHookConfig(body.config, ctx.allowPrivateHookUrls, docs);
    let events =
      body.events === undefined ? hook.events : validateHookEvents(body.events, 'properties/events', docs);
    if (body.add_events !== undefined) {
      const added = validateHookEvents(body.add_events, 'properties/add_events', docs);
      events = [...events, ...added.filter((event) => !events.includes(event))];
    }
    if (body.remove_events !== undefined) {
      const removed = validateHookEvents(body.remove_events, 'properties/remove_events', docs);
      events = events.filter((event) => !removed.includes(event));
    }
    const active = body.active === undefined ? hook.active : validateHookActive(body.active, docs);
    Object.assign(hook, { config, events, active, updatedAt: ctx.clock.now() });
    return hookPayload(hook, repo, ctx.urls);
  });

  api.delete<HookParams>('/repos/:owner/:repo/hooks/:hook_id', async (request, reply) => {
    const repo = await repoFor(request, 'write', DOCS.delete);
    const hook = findHook(repo, request.params.hook_id, DOCS.delete);
    ctx.state.hooks.delete(hook.id);
    return reply.code(204).send();
  });

  api.post<HookParams>('/repos/:owner/:repo/hooks/:hook_id/pings', async (request, reply) => {
    const repo = await repoFor(request, 'read', DOCS.ping);
    const hook = findHook(repo, request.params.hook_id, DOCS.ping);
    afterResponse(reply, () => sendPing(ctx, hook, repo));
    return reply.code(204).send();
  });
}
