import { randomInt } from 'node:crypto';
import { epochSeconds } from './clock.js';
import { randomHex } from './ids.js';
import type { OidcSubject } from './oidc-issuer.js';
import { oidcClaims } from './oidc-issuer.js';
import type { SimContext } from './sim-context.js';
import { SimInputError } from './sim-input-error.js';
import type { RepositoryRecord, RunRecord } from './sim-state.js';
import { oidcIssuerUrl } from './sim-urls.js';
import type { MintOidcTokenInput } from './types.js';
import { workflowDisplayName, workflowPath } from './workflow-names.js';

/** The zekt message action asks for this audience unless configured otherwise. */
export const DEFAULT_MESSAGE_AUDIENCE = 'api://zekt';

/** GitHub's default audience: the URL of the repository owner. */
export function defaultAudience(ctx: SimContext, repo: RepositoryRecord): string {
  return `${ctx.urls.base}/${repo.owner.login}`;
}

function repositoryClaimsOf(repo: RepositoryRecord): OidcSubject['repository'] {
  return {
    id: repo.id,
    fullName: `${repo.owner.login}/${repo.name}`,
    ownerLogin: repo.owner.login,
    ownerId: repo.owner.id,
    private: repo.private,
  };
}

/** What an OIDC token requested by a step of `run` (attempt `attempt`) says. */
export function subjectForRun(ctx: SimContext, run: RunRecord, attempt: number): OidcSubject {
  const repo = ctx.state.repositories.get(run.repositoryId);
  const workflow = ctx.state.workflows.get(run.workflowId);
  if (repo === undefined || workflow === undefined)
    throw new Error(`run ${run.id} lost its repository or workflow`);
  return {
    repository: repositoryClaimsOf(repo),
    actor: { login: run.actor.login, id: run.actor.id },
    workflowName: workflow.name,
    workflowPath: workflow.path,
    ref: `refs/heads/${run.headBranch}`,
    sha: run.headSha,
    runId: run.id,
    runNumber: run.runNumber,
    runAttempt: attempt,
    eventName: run.event,
    checkRunId: randomInt(10_000_000_000, 99_999_999_999),
  };
}

/** Mints the token the Actions runtime hands to a step of a run. */
export function mintForRun(ctx: SimContext, run: RunRecord, attempt: number, audience: string | undefined) {
  const repo = ctx.state.repositories.get(run.repositoryId);
  if (repo === undefined) throw new Error(`run ${run.id} lost its repository`);
  const claims = oidcClaims(subjectForRun(ctx, run, attempt), audience ?? defaultAudience(ctx, repo));
  return ctx.oidc.mint(oidcIssuerUrl(ctx.urls), claims, epochSeconds(ctx.clock));
}

/**
 * Mints a token for tests, without a run or for a run the simulator created (`runId`). Fields of
 * the input replace the run's; `overrides` replace any claim last (use it to forge tokens).
 */
export async function mintOidcToken(ctx: SimContext, input: MintOidcTokenInput): Promise<string> {
  if (typeof input?.repository !== 'string') throw new SimInputError('repository (owner/repo) is required');
  const repo = ctx.state.findRepositoryByFullName(input.repository);
  if (repo === undefined) throw new SimInputError(`unknown repository ${input.repository}`);
  const run = input.runId === undefined ? undefined : ctx.state.runs.get(input.runId);
  let subject: OidcSubject;
  if (run !== undefined && run.repositoryId === repo.id) {
    subject = subjectForRun(ctx, run, input.runAttempt ?? run.attempt);
  } else {
    const actor = ctx.state.getOrCreateAccount(input.actor ?? repo.owner.login, 'User');
    const file = input.workflow ?? 'deploy.yml';
    subject = {
      repository: repositoryClaimsOf(repo),
      actor: { login: actor.login, id: actor.id },
      workflowName: workflowDisplayName(file),
      workflowPath: workflowPath(file),
      ref: 'refs/heads/main',
      sha: randomHex(20),
      runId: input.runId ?? ctx.ids.run(),
      runNumber: 1,
      runAttempt: input.runAttempt ?? 1,
      eventName: 'push',
      checkRunId: randomInt(10_000_000_000, 99_999_999_999),
    };
  }
  if (input.workflow !== undefined) {
    subject.workflowPath = workflowPath(input.workflow);
    subject.workflowName = run === undefined ? workflowDisplayName(input.workflow) : subject.workflowName;
  }
  if (input.actor !== undefined) {
    const actor = ctx.state.getOrCreateAccount(input.actor, 'User');
    subject.actor = { login: actor.login, id: actor.id };
  }
  if (input.ref !== undefined) subject.ref = input.ref;
  if (input.sha !== undefined) subject.sha = input.sha;
  const claims = {
    ...oidcClaims(subject, input.audience ?? DEFAULT_MESSAGE_AUDIENCE),
    ...(input.overrides ?? {}),
  };
  return ctx.oidc.mint(oidcIssuerUrl(ctx.urls), claims, epochSeconds(ctx.clock));
}
