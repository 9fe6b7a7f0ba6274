import { GitHubApiError, invalidRequest } from './github-error.js';
import { notOfType, notSupplied, tooManyProperties } from './json-schema-messages.js';
import type { DispatchableWorkflow } from './sim-context.js';

export const WORKFLOW_DISPATCH_DOCUMENTATION_URL =
  'https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event';

/** `inputs`: at most 25 top-level properties on github.com (10 on GitHub Enterprise Server ≤ 3.20). */
export const INPUTS_MAX_PROPERTIES = 25;
export const GHES_INPUTS_MAX_PROPERTIES = 10;
/** `inputs`: "The maximum payload for inputs is 65,535 characters." */
export const INPUTS_MAX_CHARACTERS = 65_535;

export interface ValidWorkflowDispatch {
  ref: string;
  inputs: Record<string, unknown>;
  returnRunDetails: boolean;
}

/**
 * Whether the Enterprise Server version refuses `return_run_details`: the parameter came to
 * github.com on 19 February 2026 and is not in the REST description of GHES 3.20 or older.
 * @example refusesRunDetails('3.20') // true
 */
export function refusesRunDetails(ghesVersion: string | null): boolean {
  if (ghesVersion === null) return false;
  const [major = 0, minor = 0] = ghesVersion.split('.').map(Number);
  return major < 3 || (major === 3 && minor <= 20);
}

/**
 * Validates a `POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches` body by the
 * REST description (`ref` required; `inputs` an object of at most 25 properties; `return_run_details`
 * a boolean) with GitHub's request-validation messages. A key the version does not know — on GHES
 * 3.20 and older, `return_run_details` — is refused as GitHub refuses unknown keys:
 * `Invalid request.\n\n"return_run_details" is not a permitted key.`
 */
export function validateWorkflowDispatchBody(
  body: unknown,
  ghesVersion: string | null,
): ValidWorkflowDispatch {
  const docs = WORKFLOW_DISPATCH_DOCUMENTATION_URL;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest(notOfType('links/0/schema', body, 'object'), docs);
  }
  const record = body as Record<string, unknown>;
  const permitted = refusesRunDetails(ghesVersion)
    ? ['ref', 'inputs']
    : ['ref', 'inputs', 'return_run_details'];
  const unknown = Object.keys(record).find((key) => !permitted.includes(key));
  if (unknown !== undefined) throw invalidRequest(`"${unknown}" is not a permitted key.`, docs);
  if (!('ref' in record)) throw invalidRequest(notSupplied('ref'), docs);
  if (typeof record.ref !== 'string')
    throw invalidRequest(notOfType('properties/ref', record.ref, 'string'), docs);
  const inputs = record.inputs ?? {};
  if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs)) {
    throw invalidRequest(notOfType('properties/inputs', inputs, 'object'), docs);
  }
  const max = ghesVersion === null ? INPUTS_MAX_PROPERTIES : GHES_INPUTS_MAX_PROPERTIES;
  const count = Object.keys(inputs).length;
  if (count > max) throw invalidRequest(tooManyProperties(max, count), docs);
  if (JSON.stringify(inputs).length > INPUTS_MAX_CHARACTERS) {
    throw new GitHubApiError(422, `inputs are too large: at most ${INPUTS_MAX_CHARACTERS} characters.`, docs);
  }
  const details = record.return_run_details;
  if (details !== undefined && typeof details !== 'boolean') {
    throw invalidRequest(notOfType('properties/return_run_details', details, 'boolean'), docs);
  }
  return { ref: record.ref, inputs: inputs as Record<string, unknown>, returnRunDetails: details === true };
}

/**
 * What GitHub checks against the workflow file once it found it: a `workflow_dispatch` trigger,
 * the ref (the simulator's repositories have their default branch only), the inputs it declares
 * and the required ones. GitHub's messages: `Workflow does not have 'workflow_dispatch' trigger`,
 * `No ref found for: <ref>`, `Unexpected inputs provided: ["a", "b"]`, `Required input 'x' not provided`.
 */
export function checkAgainstWorkflow(
  workflow: DispatchableWorkflow,
  dispatch: ValidWorkflowDispatch,
  defaultBranch: string,
): void {
  const docs = WORKFLOW_DISPATCH_DOCUMENTATION_URL;
  const trigger = workflow.workflowDispatch;
  if (trigger === null)
    throw new GitHubApiError(422, "Workflow does not have 'workflow_dispatch' trigger", docs);
  if (dispatch.ref !== defaultBranch && dispatch.ref !== `refs/heads/${defaultBranch}`) {
    throw new GitHubApiError(422, `No ref found for: ${dispatch.ref}`, docs);
  }
  const declared = trigger.inputs;
  const unexpected = Object.keys(dispatch.inputs).filter((name) => !Object.hasOwn(declared, name));
  if (unexpected.length > 0) {
    throw new GitHubApiError(
      422,
      `Unexpected inputs provided: [${unexpected.map((name) => JSON.stringify(name)).join(', ')}]`,
      docs,
    );
  }
  for (const [name, input] of Object.entries(declared)) {
    if (input.required === true && input.default === undefined && !Object.hasOwn(dispatch.inputs, name)) {
      throw new GitHubApiError(422, `Required input '${name}' not provided`, docs);
    }
  }
}
