import { setTimeout as sleep } from 'node:timers/promises';
import { toGitHubTimestamp } from './clock.js';
import { httpRequest } from './http-client.js';
import { MESSAGE_TIMEOUT_MS, parseBody, requestIdToken } from './message-step.js';
import { DEFAULT_MESSAGE_AUDIENCE } from './oidc-tokens.js';
import { installationRefPayload } from './payloads/installation-payload.js';
import { userPayload } from './payloads/user-payload.js';
import { evaluateRunName } from './run-name.js';
import type { SimContext } from './sim-context.js';
import { SimInputError } from './sim-input-error.js';
import type { RepositoryRecord, RunRecord, WorkflowRecord } from './sim-state.js';
import type {
  ConsumerCall,
  ConsumerRunRecord,
  ConsumerWorkflowInput,
  ConsumerWorkflowTriggers,
  ConsumerWorkflowZekt,
  DispatchRecord,
  WorkflowDispatchInputDefinition,
  WorkflowDispatchRecord,
} from './types.js';
import { repositoryEventFields } from './webhook-targets.js';
import { workflowPath } from './workflow-names.js';
import {
  actorFor,
  createRun,
  ensureWorkflow,
  installedRepository,
  issueStepEnvironment,
  sendWorkflowRun,
} from './workflow-runs.js';

const CONCLUSIONS = ['success', 'failure', 'cancelled'] as const;
type ConsumerConclusion = (typeof CONCLUSIONS)[number];

/** Longest start delay or duration; a typo (seconds for ms) should not leave a run pending for days. */
const MAX_DELAY_MS = 10 * 60 * 1000;

/** A consumer workflow as declared: its file, its triggers and what its runs do. */
export interface ConsumerWorkflowDefinition {
  id: string;
  repositoryId: number;
  workflow: string;
  name: string | undefined;
  /** `on.repository_dispatch` (`types` null: every event type), or null without that trigger. */
  repositoryDispatch: { types: string[] | null } | null;
  /** `on.workflow_dispatch` with its declared inputs, or null without that trigger. */
  workflowDispatch: { inputs: Record<string, WorkflowDispatchInputDefinition> } | null;
  runName: string | undefined;
  conclusion: ConsumerConclusion;
  startDelayMs: number;
  durationMs: number;
  neverStart: boolean;
  deleteRun: boolean;
  zekt: ConsumerWorkflowZekt | undefined;
}

/** A run created for a dispatch, waiting for the dispatch's answer to go out before it starts. */
interface PreparedRun {
  definition: ConsumerWorkflowDefinition;
  record: ConsumerRunRecord;
  run: RunRecord;
  workflow: WorkflowRecord;
  repo: RepositoryRecord;
  /** `zekt` of the dispatch: `client_payload.zekt`, or the parsed `zekt` input. */
  zekt: Record<string, unknown>;
}

const INPUT_TYPES = ['string', 'boolean', 'number', 'choice', 'environment'] as const;

function optionalBoolean(value: unknown, what: string): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') throw new SimInputError(`${what} must be a boolean`);
  return value;
}

function delayMs(value: unknown, what: string): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_DELAY_MS) {
    throw new SimInputError(`${what} must be an integer number of milliseconds from 0 to ${MAX_DELAY_MS}`);
  }
  return value;
}

function validateZekt(value: unknown): ConsumerWorkflowZekt | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new SimInputError('zekt must be an object');
  const zekt = value as Record<string, unknown>;
  if (typeof zekt.url !== 'string' || !/^https?:\/\/[^/]/.test(zekt.url)) {
    throw new SimInputError('zekt.url must be the http(s) base URL of the Zekt service');
  }
  if (zekt.auth !== undefined && zekt.auth !== 'oidc' && zekt.auth !== 'delivery-token') {
    throw new SimInputError('zekt.auth must be "oidc" or "delivery-token"');
  }
  if (zekt.audience !== undefined && (typeof zekt.audience !== 'string' || zekt.audience === '')) {
    throw new SimInputError('zekt.audience must be a non-empty string');
  }
  return {
    url: zekt.url.replace(/\/+$/, ''),
    confirm: optionalBoolean(zekt.confirm, 'zekt.confirm') ?? false,
    complete: optionalBoolean(zekt.complete, 'zekt.complete') ?? false,
    auth: zekt.auth ?? 'oidc',
    audience: (zekt.audience as string | undefined) ?? DEFAULT_MESSAGE_AUDIENCE,
    fetchPayload: optionalBoolean(zekt.fetchPayload, 'zekt.fetchPayload') ?? false,
  };
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** `client_payload.zekt`, when the dispatch carries one. */
function zektOfClientPayload(clientPayload: Record<string, unknown> | null): Record<string, unknown> {
  return asObject(clientPayload?.zekt);
}

/** The `zekt` input of a `workflow_dispatch`: the same object, as a JSON string. */
function zektOfInputs(inputs: Record<string, unknown>): Record<string, unknown> {
  const text = inputs.zekt;
  if (typeof text !== 'string') return {};
  try {
    return asObject(JSON.parse(text));
  } catch {
    return {};
  }
}

function validateInputs(value: unknown): Record<string, WorkflowDispatchInputDefinition> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new SimInputError('on.workflow_dispatch.inputs must be an object of input definitions');
  }
  const inputs: Record<string, WorkflowDispatchInputDefinition> = {};
  for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
    if (!/^[A-Za-z_][\w-]*$/.test(name))
      throw new SimInputError(`input name ${JSON.stringify(name)} is not valid`);
    const input = asObject(raw);
    if (raw !== null && raw !== undefined && input !== raw) {
      throw new SimInputError(`on.workflow_dispatch.inputs.${name} must be an object`);
    }
    if (input.required !== undefined && typeof input.required !== 'boolean') {
      throw new SimInputError(`on.workflow_dispatch.inputs.${name}.required must be a boolean`);
    }
    if (input.default !== undefined && typeof input.default !== 'string') {
      throw new SimInputError(`on.workflow_dispatch.inputs.${name}.default must be a string`);
    }
    if (input.type !== undefined && !INPUT_TYPES.includes(input.type as (typeof INPUT_TYPES)[number])) {
      throw new SimInputError(
        `on.workflow_dispatch.inputs.${name}.type must be one of ${INPUT_TYPES.join(', ')}`,
      );
    }
    inputs[name] = input as WorkflowDispatchInputDefinition;
  }
  return inputs;
}

function validateTypes(types: unknown, what: string): string[] | null {
  if (types === undefined) return null;
  if (!Array.isArray(types) || types.some((type) => typeof type !== 'string' || type === '')) {
    throw new SimInputError(`${what} must be an array of event type names`);
  }
  return [...(types as string[])];
}

/** The triggers of a definition: `on`, or (without it) `repository_dispatch` with `types`. */
function validateTriggers(
  input: ConsumerWorkflowInput,
): Pick<ConsumerWorkflowDefinition, 'repositoryDispatch' | 'workflowDispatch'> {
  if (input.on === undefined) {
    return { repositoryDispatch: { types: validateTypes(input.types, 'types') }, workflowDispatch: null };
  }
  if (input.types !== undefined) {
    throw new SimInputError('give the event types as on.repository_dispatch.types, not types, with on');
  }
  if (typeof input.on !== 'object' || input.on === null || Array.isArray(input.on)) {
    throw new SimInputError('on must be an object: { repository_dispatch?, workflow_dispatch? }');
  }
  const on = input.on as ConsumerWorkflowTriggers & Record<string, unknown>;
  const unknown = Object.keys(on).filter(
    (key) => key !== 'repository_dispatch' && key !== 'workflow_dispatch',
  );
  if (unknown.length > 0) {
    throw new SimInputError(
      `the simulator starts consumer workflows on repository_dispatch and workflow_dispatch only; got ${unknown.join(', ')}`,
    );
  }
  const repository = on.repository_dispatch;
  const workflow = on.workflow_dispatch;
  return {
    repositoryDispatch:
      repository === undefined
        ? null
        : { types: validateTypes(asObject(repository).types, 'on.repository_dispatch.types') },
    workflowDispatch: workflow === undefined ? null : { inputs: validateInputs(asObject(workflow).inputs) },
  };
}

/** Waits, unless the simulator is closing (then rejects, which ends the run where it is). */
async function pause(ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  if (ms > 0) await sleep(ms, undefined, { signal });
}

/**
 * Consumer workflows (`defineConsumerWorkflow`): workflows of consumer repositories that GitHub
 * starts when a `repository_dispatch` whose event type they list in `on.repository_dispatch.types`
 * arrives, or when a `workflow_dispatch` names their file. Each accepted dispatch creates the
 * matching runs at once (so `consumerRuns()` shows them as soon as the answer arrived) and starts
 * them after the answer has gone out, as GitHub does.
 */
export class ConsumerWorkflows {
  private readonly definitions = new Map<string, ConsumerWorkflowDefinition>();
  private readonly records: ConsumerRunRecord[] = [];
  private readonly pending = new Set<Promise<void>>();
  private seq = 1;

  define(ctx: SimContext, input: ConsumerWorkflowInput): { id: string } {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw new SimInputError('defineConsumerWorkflow needs { repository, workflow, ... }');
    }
    const repo = installedRepository(ctx, input.repository);
    workflowPath(input.workflow);
    if (input.name !== undefined && (typeof input.name !== 'string' || input.name === '')) {
      throw new SimInputError('name must be a non-empty string');
    }
    const triggers = validateTriggers(input);
    if (input.runName !== undefined && typeof input.runName !== 'string') {
      throw new SimInputError('runName must be a string (a run-name template)');
    }
    if (input.conclusion !== undefined && !CONCLUSIONS.includes(input.conclusion)) {
      throw new SimInputError(`conclusion must be one of ${CONCLUSIONS.join(', ')}`);
    }
    const definition: ConsumerWorkflowDefinition = {
      id: `consumer-workflow-${this.seq++}`,
      repositoryId: repo.id,
      workflow: input.workflow,
      name: input.name,
      ...triggers,
      runName: input.runName,
      conclusion: input.conclusion ?? 'success',
      startDelayMs: delayMs(input.startDelayMs, 'startDelayMs'),
      durationMs: delayMs(input.durationMs, 'durationMs'),
      neverStart: optionalBoolean(input.neverStart, 'neverStart') ?? false,
      deleteRun: optionalBoolean(input.deleteRun, 'deleteRun') ?? false,
      zekt: validateZekt(input.zekt),
    };
    this.definitions.set(definition.id, definition);
    return { id: definition.id };
  }

  /** Stops the workflow from reacting to later dispatches; runs already started carry on. */
  remove(id: string): void {
    if (!this.definitions.delete(id)) throw new SimInputError(`no consumer workflow ${id}`);
  }

  runs(filter: { repository?: string } = {}): ConsumerRunRecord[] {
    const wanted = filter.repository?.toLowerCase();
    return this.records
      .filter((record) => wanted === undefined || record.repository.toLowerCase() === wanted)
      .map((record) => structuredClone(record));
  }

  /**
   * Called for an accepted dispatch: creates the runs of the matching workflows (queued) and
   * returns the function that starts them, to be called once the 204 has gone out.
   */
  onDispatch(ctx: SimContext, dispatch: DispatchRecord, repo: RepositoryRecord): () => void {
    const prepared: PreparedRun[] = [];
    for (const definition of this.definitions.values()) {
      if (definition.repositoryId !== repo.id) continue;
      const trigger = definition.repositoryDispatch;
      if (trigger === null) continue;
      if (trigger.types !== null && !trigger.types.includes(dispatch.eventType)) continue;
      // A workflow that never starts: GitHub accepted the dispatch and nothing else happens.
      if (definition.neverStart) continue;
      prepared.push(this.prepare(ctx, definition, { kind: 'repository_dispatch', dispatch }, repo));
    }
    return () => {
      for (const run of prepared) this.launch(ctx, run);
    };
  }

  /**
   * The workflow a `workflow_dispatch` names, by file name or workflow id (the one declared last,
   * when a test declared the same file twice), or undefined (GitHub answers 404).
   */
  find(ctx: SimContext, repo: RepositoryRecord, workflowId: string): ConsumerWorkflowDefinition | undefined {
    let file = workflowId;
    if (/^\d+$/.test(workflowId)) {
      const record = ctx.state.workflows.get(Number(workflowId));
      if (record === undefined || record.repositoryId !== repo.id) return undefined;
      file = record.path.replace(/^\.github\/workflows\//, '');
    }
    let found: ConsumerWorkflowDefinition | undefined;
    for (const definition of this.definitions.values()) {
      if (definition.repositoryId === repo.id && definition.workflow === file) found = definition;
    }
    return found;
  }

  /**
   * Called for an accepted `workflow_dispatch`: creates the run (queued) and returns its id with the
   * function that starts it, to be called once the answer has gone out.
   */
  onWorkflowDispatch(
    ctx: SimContext,
    definition: ConsumerWorkflowDefinition,
    dispatch: Omit<WorkflowDispatchRecord, 'runId'>,
    repo: RepositoryRecord,
  ): { runId: number; start: () => void } {
    const prepared = this.prepare(ctx, definition, { kind: 'workflow_dispatch', dispatch }, repo);
    return { runId: prepared.run.id, start: () => this.launch(ctx, prepared) };
  }

  /** Waits for started runs to stop; the simulator aborts `ctx.shutdown` first, so they end early. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private prepare(
    ctx: SimContext,
    definition: ConsumerWorkflowDefinition,
    trigger:
      | { kind: 'repository_dispatch'; dispatch: DispatchRecord }
      | { kind: 'workflow_dispatch'; dispatch: Omit<WorkflowDispatchRecord, 'runId'> },
    repo: RepositoryRecord,
  ): PreparedRun {
    const workflow = ensureWorkflow(ctx, repo, definition.workflow, definition.name);
    // Dispatches come from an App's installation token, so GitHub shows that App's bot as the
    // actor; the head commit (the default branch's) was written by a person.
    const installation = ctx.state.liveInstallation(trigger.dispatch.installationId);
    const bot = (installation === undefined ? ctx.app : ctx.state.appOf(installation)).bot;
    const run = createRun(ctx, repo, workflow, {
      displayTitle: workflow.name,
      event: trigger.kind,
      actor: bot,
      headCommitAuthor: actorFor(ctx, repo, undefined),
    });
    const fullName = `${repo.owner.login}/${repo.name}`;
    const common = {
      ...repositoryEventFields(ctx, repo),
      sender: userPayload(bot, ctx.urls),
      ...(installation === undefined ? {} : { installation: installationRefPayload(installation) }),
    };
    // GitHub's `repository_dispatch` or `workflow_dispatch` event payload: `github.event` in the run.
    const inputs =
      trigger.kind === 'workflow_dispatch' ? withDefaults(definition, trigger.dispatch.inputs) : null;
    const event: Record<string, unknown> =
      trigger.kind === 'repository_dispatch'
        ? {
            action: trigger.dispatch.eventType,
            branch: repo.defaultBranch,
            client_payload: structuredClone(trigger.dispatch.clientPayload),
            ...common,
          }
        : {
            inputs,
            ref: `refs/heads/${run.headBranch}`,
            ...common,
            workflow: workflow.path,
          };
    const env = issueStepEnvironment(ctx, run, workflow, repo);
    if (definition.runName !== undefined) {
      run.displayTitle = evaluateRunName(definition.runName, {
        ...(inputs === null ? {} : { inputs }),
        github: {
          event,
          event_name: run.event,
          repository: fullName,
          repository_id: String(repo.id),
          repository_owner: repo.owner.login,
          run_id: String(run.id),
          run_number: String(run.runNumber),
          run_attempt: String(run.attempt),
          workflow: workflow.name,
          actor: run.actor.login,
          triggering_actor: run.triggeringActor.login,
          ref: `refs/heads/${run.headBranch}`,
          ref_name: run.headBranch,
          sha: run.headSha,
          server_url: ctx.urls.base,
          api_url: ctx.urls.api,
        },
      });
    }
    const zekt =
      trigger.kind === 'repository_dispatch'
        ? zektOfClientPayload(trigger.dispatch.clientPayload)
        : zektOfInputs(trigger.dispatch.inputs);
    const correlationId = zekt.correlationId;
    const record: ConsumerRunRecord = {
      id: run.id,
      consumerWorkflowId: definition.id,
      repository: fullName,
      workflow: definition.workflow,
      runNumber: run.runNumber,
      trigger: trigger.kind,
      dispatchId: trigger.dispatch.id,
      eventType: trigger.kind === 'repository_dispatch' ? trigger.dispatch.eventType : null,
      displayTitle: run.displayTitle,
      status: 'queued',
      conclusion: null,
      startedAt: null,
      completedAt: null,
      deliveryId: typeof zekt.deliveryId === 'string' ? zekt.deliveryId : null,
      correlationId:
        typeof correlationId === 'string' || typeof correlationId === 'number' ? correlationId : null,
      calls: [],
      webhooks: [],
      env,
      event,
    };
    this.records.push(record);
    return { definition, record, run, workflow, repo, zekt };
  }

  private launch(ctx: SimContext, prepared: PreparedRun): void {
    if (ctx.shutdown.aborted) return;
    const done: Promise<void> = this.execute(ctx, prepared)
      .catch((error: unknown) => {
        // Ending early because the simulator closes is expected; anything else is a simulator bug.
        if (!ctx.shutdown.aborted)
          prepared.record.error = error instanceof Error ? error.message : String(error);
      })
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  /**
   * GitHub's order: requested, (delay), in_progress, the steps, completed. The run (what the REST
   * API and the webhooks show) changes status before each `workflow_run` is sent; the record changes
   * once those deliveries are done, so a record that says `completed` has nothing left to do.
   */
  private async execute(ctx: SimContext, prepared: PreparedRun): Promise<void> {
    const { definition, record, run, workflow, repo } = prepared;
    const signal = ctx.shutdown;
    const send = async (action: 'requested' | 'in_progress' | 'completed') => {
      signal.throwIfAborted();
      record.webhooks.push(...(await sendWorkflowRun(ctx, run, workflow, repo, action)));
    };

    await send('requested');
    // A workflow_dispatch run no runner picks up: GitHub created it, and it stays queued.
    if (definition.neverStart) return;
    await pause(definition.startDelayMs, signal);

    const started = ctx.clock.now();
    run.status = 'in_progress';
    run.runStartedAt = started;
    run.updatedAt = started;
    await send('in_progress');
    record.status = 'in_progress';
    record.startedAt = toGitHubTimestamp(started);

    const zekt = definition.zekt;
    const zektPayload = prepared.zekt;
    const identity = { correlationId: record.correlationId, deliveryId: record.deliveryId ?? undefined };
    if (zekt?.confirm === true) {
      record.calls.push(
        await this.call(ctx, prepared, 'confirm', 'POST', `${zekt.url}/api/event-delivery/confirm`, identity),
      );
    }
    const payloadRef = zektPayload.payloadRef as { url?: unknown } | undefined;
    if (zekt?.fetchPayload === true && typeof payloadRef?.url === 'string') {
      const call = await this.call(ctx, prepared, 'fetch-payload', 'GET', payloadRef.url, undefined);
      record.calls.push(call);
      if (call.status >= 200 && call.status < 300) record.fetchedPayload = call.body;
    }
    await pause(definition.durationMs, signal);
    if (zekt?.complete === true) {
      record.calls.push(
        await this.call(ctx, prepared, 'complete', 'POST', `${zekt.url}/api/event-delivery/complete`, {
          ...identity,
          success: definition.conclusion === 'success',
        }),
      );
    }

    signal.throwIfAborted();
    if (definition.deleteRun) {
      // Deleted by someone while it ran: GitHub sends no webhook, and the run is gone from the API.
      ctx.state.runs.delete(run.id);
      record.status = 'deleted';
      return;
    }
    const completed = ctx.clock.now();
    run.status = 'completed';
    run.conclusion = definition.conclusion;
    run.updatedAt = completed;
    await send('completed');
    record.status = 'completed';
    record.conclusion = definition.conclusion;
    record.completedAt = toGitHubTimestamp(completed);
  }

  /** One step's call to Zekt, authenticated as the consumer action would. */
  private async call(
    ctx: SimContext,
    prepared: PreparedRun,
    step: ConsumerCall['step'],
    method: 'GET' | 'POST',
    url: string,
    body: unknown,
  ): Promise<ConsumerCall> {
    const zekt = prepared.definition.zekt as ConsumerWorkflowZekt;
    const signal = ctx.shutdown;
    signal.throwIfAborted();
    let token: string;
    if (zekt.auth === 'delivery-token') {
      const deliveryToken = prepared.zekt.token;
      if (typeof deliveryToken !== 'string' || deliveryToken === '') {
        const where =
          prepared.record.trigger === 'repository_dispatch' ? 'client_payload.zekt' : 'inputs.zekt';
        return { step, status: 0, body: null, error: `${where}.token is missing` };
      }
      token = deliveryToken;
    } else {
      const idToken = await requestIdToken(
        prepared.record.env,
        zekt.audience ?? DEFAULT_MESSAGE_AUDIENCE,
        signal,
      );
      if ('error' in idToken) return { step, status: 0, body: null, error: idToken.error };
      token = idToken.token;
    }
    try {
      const response = await httpRequest({
        method,
        url,
        headers: {
          accept: 'application/json',
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        timeoutMs: MESSAGE_TIMEOUT_MS,
        signal,
      });
      return {
        step,
        status: response.status,
        body: response.body === '' ? null : parseBody(response.body),
      };
    } catch (error) {
      signal.throwIfAborted();
      return { step, status: 0, body: null, error: `${method} ${url} failed: ${(error as Error).message}` };
    }
  }
}

/** The inputs a `workflow_dispatch` run sees: those sent, and the declared defaults of the others. */
function withDefaults(
  definition: ConsumerWorkflowDefinition,
  sent: Record<string, unknown>,
): Record<string, unknown> {
  const inputs: Record<string, unknown> = {};
  for (const [name, input] of Object.entries(definition.workflowDispatch?.inputs ?? {})) {
    if (input.default !== undefined) inputs[name] = input.default;
  }
  return { ...inputs, ...structuredClone(sent) };
}
