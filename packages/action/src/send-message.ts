import * as core from '@actions/core';
import { idTokenFailure } from './consumer-auth.js';
import { type ActionInputs, endpoint } from './inputs.js';
import { writeSummary, writeTable } from './summary.js';
import { callZekt, describeProblem } from './zekt-client.js';

type MessageInputs = Extract<ActionInputs, { mode: 'message' }>;

/** What the service answers with 201. */
interface Received {
  success: true;
  eventId: string;
  consumersNotified: number;
  message?: string;
  /** Warn-mode schemas the message does not match: accepted all the same. */
  schemaViolations?: Array<{ service: string; schemaVersion: number; errors?: Violation[] }>;
}

/** One way the message breaks its service's schema: where (a JSON Pointer into the message) and what. */
interface Violation {
  pointer: string;
  message: string;
}

/**
 * A 422 from an enforced schema (`payload_schema_violation`, `schema_validation_timeout`): one
 * error annotation per violation, so each shows on the run's page with where it is in the message,
 * and a table in the job summary. The step then fails with the service's detail.
 */
async function reportViolations(body: unknown): Promise<void> {
  const problem = (typeof body === 'object' && body !== null ? body : {}) as {
    service?: unknown;
    schemaVersion?: unknown;
    errors?: unknown;
    errorCount?: unknown;
    detail?: unknown;
  };
  const errors = Array.isArray(problem.errors)
    ? problem.errors.filter(
        (e): e is Violation =>
          typeof e === 'object' &&
          e !== null &&
          typeof e.pointer === 'string' &&
          typeof e.message === 'string',
      )
    : [];
  if (errors.length === 0) return;
  const schema = `the schema of ${String(problem.service ?? 'the service')} (version ${String(problem.schemaVersion ?? '?')})`;
  for (const error of errors) {
    core.error(`${pointerOf(error.pointer)}: ${error.message}`, {
      title: `Zekt: the message does not match ${schema}`,
    });
  }
  const total = typeof problem.errorCount === 'number' ? problem.errorCount : errors.length;
  await writeTable(
    `Zekt refused the message: it does not match ${schema}`,
    ['Where', 'Problem'],
    errors.map((e) => [pointerOf(e.pointer), e.message]),
    total > errors.length ? `${total - errors.length} more not shown. ` : '',
  );
}

/** `/a/b` as it is; the empty pointer (the whole message) in words. */
function pointerOf(pointer: string): string {
  return pointer === '' ? '(the message)' : pointer;
}

/**
 * The message mode: posts `{ eventType, payload, repository, workflowRunId, … }` to
 * `POST /api/events/receive` with the job's OIDC token, wire-compatible with the public zekt-action.
 * The service takes the repository and run from the token's claims; the body repeats them so a
 * mismatch is refused (403) instead of silently attributed.
 */
export async function sendMessage(
  inputs: MessageInputs,
  env: Record<string, string | undefined>,
): Promise<void> {
  const token = await getProviderToken(inputs.audience);
  const url = endpoint(inputs.apiUrl, '/api/events/receive');
  const repository = env.GITHUB_REPOSITORY;
  const body = {
    eventType: inputs.eventType,
    payload: inputs.payload.value,
    repository,
    workflowRunId: env.GITHUB_RUN_ID,
    workflow: env.GITHUB_WORKFLOW,
    triggeredBy: env.GITHUB_ACTOR,
    commitSha: env.GITHUB_SHA,
    ref: env.GITHUB_REF,
    timestamp: new Date().toISOString(),
  };
  core.info(`Sending ${inputs.eventType} (${inputs.payload.bytes} bytes of payload) to ${url}`);
  const response = await callZekt(
    {
      method: 'POST',
      url,
      token,
      body,
      headers: repository ? { 'x-github-repository': repository } : {},
    },
    { baseDelayMs: inputs.retryBaseDelayMs, onRetry: core.warning },
  );
  if (response.status === 422) await reportViolations(response.body);
  if (response.status !== 201 && response.status !== 200) {
    throw new Error(`Zekt refused the message (${response.status})${describeProblem(response.body, ': ')}`);
  }
  const received = response.body as Partial<Received> | null;
  if (typeof received?.eventId !== 'string' || typeof received.consumersNotified !== 'number') {
    throw new Error(
      `Zekt answered ${response.status} without eventId and consumersNotified: ${response.text.slice(0, 200)}`,
    );
  }
  core.setOutput('event-id', received.eventId);
  core.setOutput('status', 'accepted');
  core.setOutput('consumers-notified', String(received.consumersNotified));
  core.info(received.message ?? `message stored; ${received.consumersNotified} consumer(s) will receive it`);
  for (const warned of received.schemaViolations ?? []) {
    for (const violation of warned.errors ?? []) {
      core.warning(`${pointerOf(violation.pointer)}: ${violation.message}`, {
        title: `Zekt: the message does not match the schema of ${warned.service} (version ${warned.schemaVersion}), which only warns`,
      });
    }
  }
  await writeSummary('Zekt message sent', [
    ['Event type', inputs.eventType],
    ['Event id', received.eventId],
    ['Consumers notified', String(received.consumersNotified)],
    ['Payload', `${inputs.payload.bytes} bytes`],
    ['Delivery', 'when this workflow run completes'],
  ]);
}

async function getProviderToken(audience: string): Promise<string> {
  try {
    // getIDToken masks the token (::add-mask::) before anything could print it.
    return await core.getIDToken(audience);
  } catch (error) {
    throw new Error(
      `could not get the job's OIDC token (${idTokenFailure(error)}): give the job permissions: id-token: write (and contents: read)`,
      { cause: error },
    );
  }
}
