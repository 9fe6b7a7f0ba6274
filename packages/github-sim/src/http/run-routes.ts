import type { FastifyInstance } from 'fastify';
import { notFound } from '../github-error.js';
import { workflowRunPayload } from '../payloads/workflow-run-payload.js';
import type { SimContext } from '../sim-context.js';
import { idParam } from './json-body.js';
import { requireRepository } from './request-auth.js';

const DOCS = { getRun: 'https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run' };

/** `GET /repos/{owner}/{repo}/actions/runs/{run_id}` for runs the simulator created (`actions: read`). */
export function registerRunRoutes(api: FastifyInstance, ctx: SimContext): void {
  api.get<{ Params: { owner: string; repo: string; run_id: string } }>(
    '/repos/:owner/:repo/actions/runs/:run_id',
    async (request) => {
      const { repo } = await requireRepository(ctx, request, 'actions', 'read', DOCS.getRun);
      const id = idParam(request.params.run_id);
      const run = id === null ? undefined : ctx.state.runs.get(id);
      const workflow = run === undefined ? undefined : ctx.state.workflows.get(run.workflowId);
      if (run === undefined || workflow === undefined || run.repositoryId !== repo.id)
        throw notFound(DOCS.getRun);
      return workflowRunPayload(run, workflow, repo, ctx.urls);
    },
  );
}
