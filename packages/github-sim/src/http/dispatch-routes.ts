import type { FastifyInstance } from 'fastify';
import { toGitHubTimestamp } from '../clock.js';
import { DISPATCH_DOCUMENTATION_URL, validateDispatch } from '../dispatch-validation.js';
import { notFound } from '../github-error.js';
import type { SimContext } from '../sim-context.js';
import type { DispatchRecord, WorkflowDispatchRecord } from '../types.js';
import {
  checkAgainstWorkflow,
  validateWorkflowDispatchBody,
  WORKFLOW_DISPATCH_DOCUMENTATION_URL,
} from '../workflow-dispatch-validation.js';
import { jsonBody } from './json-body.js';
import { requireRepository } from './request-auth.js';

/**
 * `POST /repos/{owner}/{repo}/dispatches` (needs `contents: write`): validated like GitHub, then
 * recorded and answered 204 with no body; then the repository's matching consumer workflows run.
 * https://docs.github.com/rest/repos/repos#create-a-repository-dispatch-event
 *
 * `POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches` (needs `actions: write`):
 * the workflow (file name or id) must be a consumer workflow of the repository (else 404) with a
 * `workflow_dispatch` trigger that declares every input sent; GitHub creates the run at once and,
 * asked with `return_run_details: true`, answers 200 with its id and URLs (else 204).
 * https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event
 */
export function registerDispatchRoutes(api: FastifyInstance, ctx: SimContext): void {
  api.post<{ Params: { owner: string; repo: string } }>(
    '/repos/:owner/:repo/dispatches',
    async (request, reply) => {
      const docs = DISPATCH_DOCUMENTATION_URL;
      const { caller, repo } = await requireRepository(ctx, request, 'contents', 'write', docs);
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

  api.post<{ Params: { owner: string; repo: string; workflow_id: string } }>(
    '/repos/:owner/:repo/actions/workflows/:workflow_id/dispatches',
    async (request, reply) => {
      const docs = WORKFLOW_DISPATCH_DOCUMENTATION_URL;
      const { caller, repo } = await requireRepository(ctx, request, 'actions', 'write', docs);
      const body = validateWorkflowDispatchBody(jsonBody(request, docs), ctx.ghesVersion);
      const workflow = ctx.consumerWorkflows.find(ctx, repo, request.params.workflow_id);
      if (workflow === undefined) throw notFound(docs);
      checkAgainstWorkflow(workflow, body, repo.defaultBranch);
      const fullName = `${repo.owner.login}/${repo.name}`;
      const dispatch: Omit<WorkflowDispatchRecord, 'runId'> = {
        id: ctx.ids.dispatch(),
        repository: fullName,
        installationId: caller.installation.id,
        workflow: workflow.workflow,
        ref: body.ref,
        inputs: body.inputs,
        returnRunDetails: body.returnRunDetails,
        receivedAt: toGitHubTimestamp(ctx.clock.now()),
      };
      // The run exists before the answer (its id is in it), and starts once the answer went out.
      const { runId, start } = ctx.consumerWorkflows.onWorkflowDispatch(ctx, workflow, dispatch, repo);
      ctx.state.workflowDispatches.push({ ...dispatch, runId });
      reply.raw.once('close', start);
      if (!body.returnRunDetails) return reply.code(204).send();
      return reply.code(200).send({
        workflow_run_id: runId,
        run_url: `${ctx.urls.api}/repos/${fullName}/actions/runs/${runId}`,
        html_url: `${ctx.urls.base}/${fullName}/actions/runs/${runId}`,
      });
    },
  );
}
