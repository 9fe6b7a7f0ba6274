import type { FastifyInstance } from 'fastify';
import { tokenRepositories } from '../installation-tokens.js';
import { repositoryPayload } from '../payloads/repository-payload.js';
import type { SimContext } from '../sim-context.js';
import { repositoryForToken, requireInstallation } from './request-auth.js';

const DOCS = {
  listRepos:
    'https://docs.github.com/rest/apps/installations#list-repositories-accessible-to-the-app-installation',
  getRepo: 'https://docs.github.com/rest/repos/repos#get-a-repository',
};

/** Repositories as an installation sees them. */
export function registerRepositoryRoutes(api: FastifyInstance, ctx: SimContext): void {
  api.get<{ Querystring: { per_page?: string; page?: string } }>(
    '/installation/repositories',
    async (request) => {
      const caller = await requireInstallation(ctx, request, DOCS.listRepos);
      const perPage = Math.min(100, Math.max(1, Number(request.query.per_page ?? 30) || 30));
      const page = Math.max(1, Number(request.query.page ?? 1) || 1);
      const repositories = tokenRepositories(ctx, caller.token);
      return {
        total_count: repositories.length,
        repository_selection: 'selected',
        repositories: repositories
          .slice((page - 1) * perPage, page * perPage)
          .map((repo) => repositoryPayload(repo, ctx.urls)),
      };
    },
  );

  api.get<{ Params: { owner: string; repo: string } }>('/repos/:owner/:repo', async (request) => {
    const caller = await requireInstallation(ctx, request, DOCS.getRepo);
    const repo = repositoryForToken(
      ctx,
      caller,
      request.params.owner,
      request.params.repo,
      'metadata',
      'read',
      DOCS.getRepo,
    );
    return repositoryPayload(repo, ctx.urls);
  });
}
