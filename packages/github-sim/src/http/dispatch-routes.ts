import type { FastifyInstance } from 'fastify';
import { toGitHubTimestamp } from '../clock.js';
import { DISPATCH_DOCUMENTATION_URL, validateDispatch } from '../dispatch-validation.js';
import type { SimContext } from '../sim-context.js';
import type { DispatchRecord } from '../types.js';
import { jsonBody } from './json-body.js';
import { repositoryForToken, requireInstallation } from './request-auth.js';

/**
 * `POST /repos/{owner}/{repo}/dispatches` (needs `contents: write`): validated like GitHub, then
 * recorded and answered 204 with no body; then the repository's matching consumer workflows run.
 * https://docs.github.com/rest/repos/repos#create-a-repository-dispatch-event
 */
export function registerDispatchRoutes(api: FastifyInstance, ctx: SimContext): void {
  api.post<{ Params: { owner: string; repo: string } }>(
    '/repos/:owner/:repo/dispatches',
    async (request, reply) => {
      const docs = DISPATCH_DOCUMENTATION_URL;
      const caller = await requireInstallation(ctx, request, docs);
      const repo = repositoryForToken(
        ctx,
        caller,
        request.params.owner,
        request.params.repo,
        'contents',
        'write',
        docs,
      );
      const { eventType, clientPayload } = validateDispatch(jsonBody(request, docs));
      const dispatch: DispatchRecord = {
        id: ctx.ids.dispatch(),
        repository: `${repo.owner.login}/${repo.name}`,
        installationId: caller.installation.id,
        eventType,
        clientPayload,
        receivedAt: toGitHubTimestamp(ctx.clock.now()),
      };
      ctx.state.dispatches.push(dispatch);
      ctx.onDispatch(dispatch);
      // The consumer workflows' runs exist from now on, but start only after the 204 went out
      // ('close' also fires when the client went away first: the dispatch was accepted all the same).
      const start = ctx.consumerWorkflows.onDispatch(ctx, dispatch, repo);
      reply.raw.once('close', start);
      return reply.code(204).send();
    },
  );
}
