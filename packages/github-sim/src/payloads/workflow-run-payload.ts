import { toGitHubTimestamp } from '../clock.js';
import type { RepositoryRecord, RunRecord, WorkflowRecord } from '../sim-state.js';
import type { SimUrls } from '../sim-urls.js';
import type { WorkflowRun } from '../types.js';
import { repositoryPayload } from './repository-payload.js';
import { userPayload } from './user-payload.js';

/**
 * A workflow run in the shape of `GET /repos/{owner}/{repo}/actions/runs/{run_id}` and of the
 * `workflow_run` webhook (reference: the `workflow_run` examples of `@octokit/webhooks-examples`).
 */
export function workflowRunPayload(
  run: RunRecord,
  workflow: WorkflowRecord,
  repo: RepositoryRecord,
  urls: SimUrls,
): WorkflowRun {
  const fullName = `${repo.owner.login}/${repo.name}`;
  const repoApi = `${urls.api}/repos/${fullName}`;
  const url = `${repoApi}/actions/runs/${run.id}`;
  const repository = repositoryPayload(repo, urls);
  const author = run.headCommitAuthor ?? run.actor;
  return {
    id: run.id,
    name: workflow.name,
    node_id: run.nodeId,
    check_suite_id: run.checkSuiteId,
    check_suite_node_id: run.checkSuiteNodeId,
    head_branch: run.headBranch,
    head_sha: run.headSha,
    path: workflow.path,
    display_title: run.displayTitle,
    run_number: run.runNumber,
    run_attempt: run.attempt,
    event: run.event,
    status: run.status,
    conclusion: run.conclusion,
    workflow_id: workflow.id,
    url,
    html_url: `${urls.base}/${fullName}/actions/runs/${run.id}`,
    pull_requests: [],
    referenced_workflows: [],
    created_at: toGitHubTimestamp(run.createdAt),
    updated_at: toGitHubTimestamp(run.updatedAt),
    actor: userPayload(run.actor, urls),
    triggering_actor: userPayload(run.triggeringActor, urls),
    run_started_at: toGitHubTimestamp(run.runStartedAt),
    jobs_url: `${url}/jobs`,
    logs_url: `${url}/logs`,
    check_suite_url: `${repoApi}/check-suites/${run.checkSuiteId}`,
    artifacts_url: `${url}/artifacts`,
    cancel_url: `${url}/cancel`,
    rerun_url: `${url}/rerun`,
    previous_attempt_url: run.attempt > 1 ? `${url}/attempts/${run.attempt - 1}` : null,
    workflow_url: `${repoApi}/actions/workflows/${workflow.id}`,
    head_commit: {
      id: run.headSha,
      tree_id: run.treeSha,
      message: `Update ${workflow.path}`,
      timestamp: toGitHubTimestamp(run.createdAt),
      author: { name: author.login, email: `${author.id}+${author.login}@users.noreply.github.com` },
      committer: { name: 'GitHub', email: 'noreply@github.com' },
    },
    repository,
    head_repository: repository,
    head_repository_id: repo.id,
  };
}

/** The `workflow` object of `workflow_run` webhooks. */
export function workflowPayload(workflow: WorkflowRecord, repo: RepositoryRecord, urls: SimUrls) {
  const fullName = `${repo.owner.login}/${repo.name}`;
  const created = toGitHubTimestamp(workflow.createdAt);
  return {
    badge_url: `${urls.base}/${fullName}/workflows/${encodeURIComponent(workflow.name)}/badge.svg`,
    created_at: created,
    html_url: `${urls.base}/${fullName}/blob/${repo.defaultBranch}/${workflow.path}`,
    id: workflow.id,
    name: workflow.name,
    node_id: workflow.nodeId,
    path: workflow.path,
    state: 'active',
    updated_at: created,
    url: `${urls.api}/repos/${fullName}/actions/workflows/${workflow.id}`,
  };
}
