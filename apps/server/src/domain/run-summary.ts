/**
 * The part of a `workflow_run` webhook that Zekt keeps and forwards: the `event` object of the
 * client payload. Extracted once at ingestion so routing and replay never need the
 * raw webhook again. https://docs.github.com/webhooks/webhook-events-and-payloads#workflow_run
 */
export interface RunSummary {
  repository: string;
  workflow: string;
  workflowPath: string;
  runId: string;
  runAttempt: number;
  runNumber: number;
  conclusion: string | null;
  headBranch: string | null;
  headSha: string;
  actor: string | null;
  htmlUrl: string;
  completedAt: string;
}

export interface CompletedRun {
  repositoryId: number;
  runId: number;
  runAttempt: number;
  /** `display_title`: the run name, which carries the delivery id in consumer runs. */
  displayTitle: string | null;
  event: string | null;
  summary: RunSummary;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; problem: string };

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function positiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function optionalString(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/**
 * Reads a `workflow_run` webhook body. Returns a problem (for a 400) when a field Zekt needs is
 * missing; everything else GitHub sends is ignored.
 *
 * @example parseWorkflowRun(JSON.parse(body)) // { ok: true, value: { runId: 30433642, … } }
 */
export function parseWorkflowRun(body: unknown): ParseResult<CompletedRun> {
  if (!isObject(body)) return { ok: false, problem: 'the webhook body is not a JSON object' };
  const run = body.workflow_run;
  const repository = body.repository;
  if (!isObject(run)) return { ok: false, problem: 'workflow_run is missing' };
  if (!isObject(repository)) return { ok: false, problem: 'repository is missing' };
  if (!positiveInteger(repository.id))
    return { ok: false, problem: 'repository.id must be a positive integer' };
  if (typeof repository.full_name !== 'string')
    return { ok: false, problem: 'repository.full_name is missing' };
  if (!positiveInteger(run.id)) return { ok: false, problem: 'workflow_run.id must be a positive integer' };
  const runAttempt = run.run_attempt === undefined ? 1 : run.run_attempt;
  if (!positiveInteger(runAttempt))
    return { ok: false, problem: 'workflow_run.run_attempt must be a positive integer' };
  // Older payloads lack workflow_run.path; the top-level `workflow` object always has it.
  const workflow = isObject(body.workflow) ? body.workflow : {};
  const path = optionalString(run.path) ?? optionalString(workflow.path);
  if (!path) return { ok: false, problem: 'workflow_run.path is missing' };
  if (typeof run.head_sha !== 'string') return { ok: false, problem: 'workflow_run.head_sha is missing' };
  const actor = isObject(run.actor)
    ? optionalString(run.actor.login)
    : isObject(body.sender)
      ? optionalString(body.sender.login)
      : null;
  const workflowName = optionalString(run.name) ?? optionalString(workflow.name) ?? path;
  return {
    ok: true,
    value: {
      repositoryId: repository.id,
      runId: run.id,
      runAttempt,
      displayTitle: optionalString(run.display_title),
      event: optionalString(run.event),
      summary: {
        repository: repository.full_name,
        workflow: workflowName,
        // GitHub appends `@ref` to the path of reusable/dynamic workflows; the file is what we whitelist.
        workflowPath: path.split('@')[0]!,
        runId: String(run.id),
        runAttempt,
        runNumber: positiveInteger(run.run_number) ? run.run_number : 0,
        conclusion: optionalString(run.conclusion),
        headBranch: optionalString(run.head_branch),
        headSha: run.head_sha,
        actor,
        htmlUrl: optionalString(run.html_url) ?? '',
        completedAt: optionalString(run.updated_at) ?? '',
      },
    },
  };
}
