import type { FastifyInstance } from 'fastify';
import { tokenRepositories } from '../installation-tokens.js';
import { repositoryPayload } from '../payloads/repository-payload.js';
import type { SimContext } from '../sim-context.js';
import { type PageQuery, paginate } from './pagination.js';
import { requireInstallation, requireRepository } from './request-auth.js';

const DOCS = {
  listRepos:
    'https://docs.github.com/rest/apps/installations#list-repositories-accessible-to-the-app-installation',
  getRepo: 'https://docs.github.com/rest/repos/repos#get-a-repository',
};

/** Repositories as an installation sees them. */
export function registerRepositoryRoutes(api: FastifyInstance, ctx: SimContext): void {
  api.get<{ Querystring: PageQuery }>('/installation/repositories', async (request, reply) => {
    const caller = await requireInstallation(ctx, request, DOCS.listRepos);
    const repositories = tokenRepositories(ctx, caller.token);
    return {
      total_count: repositories.length,
      repository_selection: 'selected',
      repositories: paginate(ctx, request, reply, repositories).map((repo) =>
        repositoryPayload(repo, ctx.urls),
      ),
    };
  });

  api.get<{ Params: { owner: string; repo: string } }>('/repos/:owner/:repo', async (request) => {
    const { repo } = await requireRepository(ctx, request, 'metadata', 'read', DOCS.getRepo);
    return repositoryPayload(repo, ctx.urls);
  });
}
