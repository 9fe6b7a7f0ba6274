import { newGuid, prefixedNodeId, randomAlphanumeric, randomHex } from './ids.js';
import { grants } from './installation-tokens.js';
import { runMessageStep } from './message-step.js';
import { DEFAULT_MESSAGE_AUDIENCE } from './oidc-tokens.js';
import { installationRefPayload } from './payloads/installation-payload.js';
import { userPayload } from './payloads/user-payload.js';
import { workflowPayload, workflowRunPayload } from './payloads/workflow-run-payload.js';
import { sendToRepositoryHooks } from './repository-webhooks.js';
import type { SimContext } from './sim-context.js';
import { SimInputError } from './sim-input-error.js';
import type { AccountRecord, RepositoryRecord, RunRecord, WorkflowRecord } from './sim-state.js';
import { oidcIssuerUrl } from './sim-urls.js';
import type {
  MessageInput,
  MessageResult,
  RerunWorkflowInput,
  RunWorkflowInput,
  RunWorkflowResult,
  WebhookDeliveryRecord,
  WorkflowConclusion,
} from './types.js';
import { appHookTarget, repositoryEventFields } from './webhook-targets.js';
import { workflowDisplayName, workflowPath } from './workflow-names.js';

const CONCLUSIONS: readonly WorkflowConclusion[] = [
  'success',
  'failure',
  'cancelled',
  'timed_out',
  'skipped',
  'neutral',
  'action_required',
];

interface AttemptOptions {
  conclusion: WorkflowConclusion;
  message: MessageInput | undefined;
  send: { requested?: boolean; inProgress?: boolean } | undefined;
}

function validateConclusion(value: unknown): WorkflowConclusion {
  if (value === undefined) return 'success';
  if (!CONCLUSIONS.includes(value as WorkflowConclusion)) {
    throw new SimInputError(
      `conclusion must be one of ${CONCLUSIONS.join(', ')}; got ${JSON.stringify(value)}`,
    );
  }
  return value as WorkflowConclusion;
}

function validateMessage(value: unknown): MessageInput | undefined {
  if (value === undefined || value === null) return undefined;
  const message = value as Partial<MessageInput>;
  if (
    typeof message !== 'object' ||
    typeof message.zektUrl !== 'string' ||
    !/^https?:\/\//.test(message.zektUrl)
  ) {
    throw new SimInputError('message.zektUrl must be the http(s) base URL of the Zekt service');
  }
  if (typeof message.eventType !== 'string') throw new SimInputError('message.eventType must be a string');
  if (message.audience !== undefined && typeof message.audience !== 'string') {
    throw new SimInputError('message.audience must be a string');
  }
  return {
    zektUrl: message.zektUrl,
    eventType: message.eventType,
    payload: message.payload ?? null,
    audience: message.audience,
  };
}

export function installedRepository(ctx: SimContext, fullName: unknown): RepositoryRecord {
  const repo = typeof fullName === 'string' ? ctx.state.findRepositoryByFullName(fullName) : undefined;
  if (repo === undefined || ctx.state.installationOfRepository(repo) === undefined) {
    throw new SimInputError(
      `${String(fullName)} is not a repository of an installation; create the installation first`,
    );
  }
  return repo;
}

/** A user to act as: the given login, else the owner (or, for an organisation, who installed the App). */
export function actorFor(ctx: SimContext, repo: RepositoryRecord, login: unknown): AccountRecord {
  if (login !== undefined) {
    if (typeof login !== 'string' || login === '') throw new SimInputError('actor must be a login');
    return ctx.state.getOrCreateAccount(login, 'User');
  }
  if (repo.owner.type === 'User') return repo.owner;
  return ctx.state.installationOfRepository(repo)?.sender ?? repo.owner;
}

/** The environment a step of this attempt sees: the Actions runtime variables and `GITHUB_*`. */
export function stepEnvironment(
  ctx: SimContext,
  run: RunRecord,
  workflow: WorkflowRecord,
  repo: RepositoryRecord,
  requestToken: string,
) {
  const fullName = `${repo.owner.login}/${repo.name}`;
  return {
    ACTIONS_ID_TOKEN_REQUEST_URL: `${oidcIssuerUrl(ctx.urls)}/idtoken?api-version=2.0`,
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: requestToken,
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_ACTOR: run.triggeringActor.login,
    GITHUB_ACTOR_ID: String(run.triggeringActor.id),
    GITHUB_API_URL: ctx.urls.api,
    GITHUB_EVENT_NAME: run.event,
    GITHUB_REF: `refs/heads/${run.headBranch}`,
    GITHUB_REF_NAME: run.headBranch,
    GITHUB_REF_TYPE: 'branch',
    GITHUB_REPOSITORY: fullName,
    GITHUB_REPOSITORY_ID: String(repo.id),
    GITHUB_REPOSITORY_OWNER: repo.owner.login,
    GITHUB_REPOSITORY_OWNER_ID: String(repo.owner.id),
    GITHUB_RUN_ATTEMPT: String(run.attempt),
    GITHUB_RUN_ID: String(run.id),
    GITHUB_RUN_NUMBER: String(run.runNumber),
    GITHUB_SERVER_URL: ctx.urls.base,
    GITHUB_SHA: run.headSha,
    GITHUB_WORKFLOW: workflow.name,
    GITHUB_WORKFLOW_REF: `${fullName}/${workflow.path}@refs/heads/${run.headBranch}`,
    GITHUB_WORKFLOW_SHA: run.headSha,
  };
}

/**
 * Sends `workflow_run` to the repository's hooks that subscribed to it and, when the App subscribes
 * to `workflow_run` (and may read actions), to the App hook with `installation` added.
 * https://docs.github.com/webhooks/webhook-events-and-payloads#workflow_run
 */
export async function sendWorkflowRun(
  ctx: SimContext,
  run: RunRecord,
  workflow: WorkflowRecord,
  repo: RepositoryRecord,
  action: 'requested' | 'in_progress' | 'completed',
): Promise<WebhookDeliveryRecord[]> {
  const payload = {
    action,
    workflow_run: workflowRunPayload(run, workflow, repo, ctx.urls),
    workflow: workflowPayload(workflow, repo, ctx.urls),
    ...repositoryEventFields(ctx, repo),
    sender: userPayload(run.triggeringActor, ctx.urls),
  };
  // One event, one GUID, whichever hooks receive it (the repository's and every App's).
  const guid = newGuid();
  const toRepositoryHooks = sendToRepositoryHooks(ctx, repo, 'workflow_run', payload, guid);
  // Every App installed on the repository that subscribed to the event gets it, on its own hook.
  const toApps = ctx.state
    .installationsOfRepository(repo)
    .filter(
      (installation) =>
        ctx.state.appOf(installation).events.includes('workflow_run') &&
        grants(installation.permissions.actions, 'read'),
    )
    .map((installation) =>
      ctx.webhooks.send(
        appHookTarget(ctx.state.appOf(installation)),
        'workflow_run',
        { ...payload, installation: installationRefPayload(installation) },
        guid,
      ),
    );
  return [...(await toRepositoryHooks), ...(await Promise.all(toApps))];
}

/**
 * Issues the attempt's `ACTIONS_ID_TOKEN_REQUEST_TOKEN` (it stays valid after the run, so a test can
 * replay a step) and returns the step environment that carries it.
 */
export function issueStepEnvironment(
  ctx: SimContext,
  run: RunRecord,
  workflow: WorkflowRecord,
  repo: RepositoryRecord,
): Record<string, string> {
  const requestToken = randomAlphanumeric(40);
  ctx.state.runtimeTokens.set(requestToken, { token: requestToken, runId: run.id, attempt: run.attempt });
  return stepEnvironment(ctx, run, workflow, repo, requestToken);
}

/** The repository's workflow at `path`, created on first use; `name` renames it when given. */
export function ensureWorkflow(
  ctx: SimContext,
  repo: RepositoryRecord,
  file: string,
  name: string | undefined,
): WorkflowRecord {
  const path = workflowPath(file);
  let workflow = ctx.state.findWorkflow(repo.id, path);
  if (workflow === undefined) {
    const id = ctx.ids.workflow();
    workflow = {
      id,
      nodeId: prefixedNodeId('W'),
      repositoryId: repo.id,
      path,
      name: name ?? workflowDisplayName(file),
      createdAt: ctx.clock.now(),
      runCount: 0,
    };
    ctx.state.workflows.set(id, workflow);
  } else if (name !== undefined) {
    workflow.name = name;
  }
  return workflow;
}

/** What distinguishes a new run; everything else is generated. */
export interface NewRunOptions {
  displayTitle: string;
  event: string;
  actor: AccountRecord;
  headCommitAuthor?: AccountRecord;
  headBranch?: string;
  headSha?: string;
}

/** Creates and stores a queued run (attempt 1) of the workflow, counting its run number. */
export function createRun(
  ctx: SimContext,
  repo: RepositoryRecord,
  workflow: WorkflowRecord,
  options: NewRunOptions,
): RunRecord {
  const now = ctx.clock.now();
  workflow.runCount += 1;
  const run: RunRecord = {
    id: ctx.ids.run(),
    nodeId: prefixedNodeId('WFR'),
    repositoryId: repo.id,
    workflowId: workflow.id,
    runNumber: workflow.runCount,
    attempt: 1,
    displayTitle: options.displayTitle,
    event: options.event,
    status: 'queued',
    conclusion: null,
    actor: options.actor,
    triggeringActor: options.actor,
    ...(options.headCommitAuthor === undefined ? {} : { headCommitAuthor: options.headCommitAuthor }),
    headBranch: options.headBranch ?? repo.defaultBranch,
    headSha: options.headSha ?? randomHex(20),
    treeSha: randomHex(20),
    checkSuiteId: ctx.ids.checkSuite(),
    checkSuiteNodeId: prefixedNodeId('CS'),
    createdAt: now,
    updatedAt: now,
    runStartedAt: now,
  };
  ctx.state.runs.set(run.id, run);
  return run;
}

/** One attempt of a run, in GitHub's order: start, (message step), complete with webhooks. */
async function executeAttempt(
  ctx: SimContext,
  run: RunRecord,
  workflow: WorkflowRecord,
  repo: RepositoryRecord,
  options: AttemptOptions,
): Promise<RunWorkflowResult> {
  const env = issueStepEnvironment(ctx, run, workflow, repo);
  const webhooks: WebhookDeliveryRecord[] = [];

  run.status = 'queued';
  if (options.send?.requested === true)
    webhooks.push(...(await sendWorkflowRun(ctx, run, workflow, repo, 'requested')));
  run.status = 'in_progress';
  run.updatedAt = ctx.clock.now();
  if (options.send?.inProgress === true) {
    webhooks.push(...(await sendWorkflowRun(ctx, run, workflow, repo, 'in_progress')));
  }

  let message: MessageResult | null = null;
  if (options.message !== undefined) {
    message = await runMessageStep({
      env,
      message: options.message,
      audience: options.message.audience ?? DEFAULT_MESSAGE_AUDIENCE,
      workflowName: workflow.name,
      timestamp: ctx.clock.now().toISOString(),
    });
  }

  run.status = 'completed';
  run.conclusion = options.conclusion;
  run.updatedAt = ctx.clock.now();
  webhooks.push(...(await sendWorkflowRun(ctx, run, workflow, repo, 'completed')));
  return { run: workflowRunPayload(run, workflow, repo, ctx.urls), env, message, webhooks };
}

/**
 * A scripted provider run: creates the run, then (with `message`) does what the zekt message
 * action does, then completes the run and sends `workflow_run` `completed`.
 */
export async function runWorkflow(ctx: SimContext, input: RunWorkflowInput): Promise<RunWorkflowResult> {
  if (typeof input !== 'object' || input === null)
    throw new SimInputError('runWorkflow needs { repository, workflow, ... }');
  const repo = installedRepository(ctx, input.repository);
  workflowPath(input.workflow); // refuses a bad file name before anything else is checked
  const conclusion = validateConclusion(input.conclusion);
  const message = validateMessage(input.message);
  if (input.name !== undefined && (typeof input.name !== 'string' || input.name === '')) {
    throw new SimInputError('name must be a non-empty string');
  }
  if (input.headSha !== undefined && !/^[0-9a-f]{40}$/.test(input.headSha)) {
    throw new SimInputError('headSha must be 40 lowercase hex characters');
  }
  if (input.headBranch !== undefined && (typeof input.headBranch !== 'string' || input.headBranch === '')) {
    throw new SimInputError('headBranch must be a branch name');
  }
  const actor = actorFor(ctx, repo, input.actor);
  const workflow = ensureWorkflow(ctx, repo, input.workflow, input.name);
  const run = createRun(ctx, repo, workflow, {
    displayTitle: input.displayTitle ?? workflow.name,
    event: input.event ?? 'push',
    actor,
    ...(input.headBranch === undefined ? {} : { headBranch: input.headBranch }),
    ...(input.headSha === undefined ? {} : { headSha: input.headSha }),
  });
  return executeAttempt(ctx, run, workflow, repo, { conclusion, message, send: input.send });
}

/** Re-runs a run: same id and run number, `run_attempt` + 1, and the same sequence of events. */
export async function rerunWorkflow(
  ctx: SimContext,
  repository: string,
  runId: number,
  input: RerunWorkflowInput = {},
): Promise<RunWorkflowResult> {
  const repo = installedRepository(ctx, repository);
  const run = ctx.state.runs.get(runId);
  const workflow = run === undefined ? undefined : ctx.state.workflows.get(run.workflowId);
  if (run === undefined || workflow === undefined || run.repositoryId !== repo.id) {
    throw new SimInputError(`no run ${runId} in ${repository}`);
  }
  if (run.status !== 'completed') throw new SimInputError(`run ${runId} is still ${run.status}`);
  const conclusion = validateConclusion(input.conclusion);
  const message = validateMessage(input.message);
  const now = ctx.clock.now();
  run.attempt += 1;
  run.conclusion = null;
  run.triggeringActor = input.actor === undefined ? run.triggeringActor : actorFor(ctx, repo, input.actor);
  run.runStartedAt = now;
  run.updatedAt = now;
  return executeAttempt(ctx, run, workflow, repo, { conclusion, message, send: input.send });
}
