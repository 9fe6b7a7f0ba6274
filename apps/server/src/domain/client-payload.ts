import type { RunSummary } from './run-summary.js';

/**
 * GitHub's limits on `POST /repos/{owner}/{repo}/dispatches`: `client_payload` has at most 10
 * top-level properties and the request must stay under 64 KB.
 * https://docs.github.com/rest/repos/repos#create-a-repository-dispatch-event
 * Zekt sends one top-level key (`zekt`), and measures the whole request body against the limit
 * (`zekt.traceparent`, 55 bytes when Zekt traces, included).
 */
export const DISPATCH_BODY_LIMIT_BYTES = 64 * 1024;

export interface PayloadRef {
  url: string;
  bytes: number;
}

export interface ZektEnvelope {
  version: 1;
  correlationId: string;
  deliveryId: string;
  durable: boolean;
  isReplay: boolean;
  retry: number;
  token?: string;
  /** W3C trace context of the attempt that sent this delivery, when Zekt traces. */
  traceparent?: string;
  /** The version of the service's message schema the payload was checked against (docs/contracts.md). */
  schemaVersion?: number;
  event: RunSummary;
  payload?: unknown;
  payloadRef?: PayloadRef;
}

export interface DispatchBody {
  event_type: string;
  client_payload: { zekt: ZektEnvelope };
}

/**
 * A value's JSON text, typed by the value. A dispatch body is serialised once, to be measured
 * against GitHub's limit, and that text is what is sent: a second `JSON.stringify` of the summary
 * and the message was a measurable part of each dispatch.
 */
export type JsonText<T> = string & { readonly __jsonOf?: T };

/**
 * GitHub's limits on `POST /repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches`: `inputs`
 * has at most 25 top-level properties (10 on GitHub Enterprise Server 3.20 and older) and "the
 * maximum payload for inputs is 65,535 characters".
 * https://docs.github.com/actions/reference/workflows-and-actions/workflow-syntax#onworkflow_dispatchinputs
 * Zekt sends one input (`zekt`, the envelope as a JSON text, within either count) and measures the
 * serialised `inputs` object in UTF-16 code units, which are never fewer than characters.
 */
export const WORKFLOW_INPUTS_LIMIT_CHARACTERS = 65_535;

/** The body of a `workflow_dispatch`: the ref and the one `zekt` input. */
export interface WorkflowDispatchBody {
  ref: string;
  inputs: { zekt: string };
  /** Ask GitHub for the created run's id and URLs (200 instead of 204); GHES ≤ 3.20 refuses it. */
  return_run_details?: boolean;
}

export interface BuildDispatchInput {
  eventType: string;
  correlationId: string;
  deliveryId: string;
  durable: boolean;
  isReplay: boolean;
  retry: number;
  /** Per-delivery token; durable deliveries only. */
  token?: string | undefined;
  /** The attempt's W3C `traceparent`; the consumer may continue the trace under it. */
  traceparent?: string | undefined;
  /** The schema version the message was checked against; null or absent: none. */
  schemaVersion?: number | null | undefined;
  event: RunSummary;
  /** The provider's message, unchanged; `undefined` when the run sent none. */
  message: { payload: unknown } | undefined;
  /** Where the consumer fetches the message when it does not fit (`payloadRef`). */
  payloadUrl: string;
}

export interface BuiltDispatch {
  body: DispatchBody;
  /** `body` as the request sends it; `bytes` is its length in UTF-8. */
  json: JsonText<DispatchBody>;
  bytes: number;
  byReference: boolean;
}

export function byteLength(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

/**
 * The aggregated payload for one delivery. The message goes inline when the whole request fits
 * GitHub's limit, otherwise it is replaced by a `payloadRef` the consumer action fetches.
 *
 * @example buildDispatchBody({ eventType: 'deployed', …, message: { payload: { version: '1.2.3' } } })
 */
export function buildDispatchBody(input: BuildDispatchInput): BuiltDispatch {
  const built = chooseEnvelope(input, (zekt) => {
    const body: DispatchBody = { event_type: input.eventType, client_payload: { zekt } };
    const json: JsonText<DispatchBody> = JSON.stringify(body);
    const bytes = byteLength(json);
    return { body: { body, json }, bytes, fits: bytes < DISPATCH_BODY_LIMIT_BYTES };
  });
  return { ...built.body, bytes: built.bytes, byReference: built.byReference };
}

export interface BuiltWorkflowInputs {
  inputs: WorkflowDispatchBody['inputs'];
  /** Characters of the serialised `inputs` (what GitHub's limit counts). */
  inputCharacters: number;
  byReference: boolean;
}

/**
 * The same envelope as `buildDispatchBody`, as the `zekt` input of a `workflow_dispatch` (a JSON
 * text: workflow inputs are strings). The message goes inline when the inputs fit GitHub's limit
 * (`WORKFLOW_INPUTS_LIMIT_CHARACTERS`), otherwise it is replaced by a `payloadRef`.
 *
 * @example buildWorkflowInputs({ …, message: undefined }).inputs // { zekt: '{"version":1,…}' }
 */
export function buildWorkflowInputs(input: BuildDispatchInput): BuiltWorkflowInputs {
  const built = chooseEnvelope(input, (zekt) => {
    const inputs = { zekt: JSON.stringify(zekt) };
    const characters = JSON.stringify(inputs).length;
    return { body: inputs, bytes: characters, fits: characters <= WORKFLOW_INPUTS_LIMIT_CHARACTERS };
  });
  return { inputs: built.body, inputCharacters: built.bytes, byReference: built.byReference };
}

/**
 * The request body: the ref, the inputs, and — unless this GitHub refused it before — the request
 * for the created run's details.
 * @example workflowDispatchBody('main', { zekt: '{}' }, true) // { ref: 'main', inputs: { zekt: '{}' }, return_run_details: true }
 */
export function workflowDispatchBody(
  ref: string,
  inputs: WorkflowDispatchBody['inputs'],
  returnRunDetails: boolean,
): WorkflowDispatchBody {
  return { ref, inputs, ...(returnRunDetails ? { return_run_details: true } : {}) };
}

/**
 * GitHub Enterprise Server 3.20 and older do not know `return_run_details` (it came to github.com
 * on 19 February 2026) and refuse the request: 422 `Invalid request. "return_run_details" is not a
 * permitted key.` Such an answer means: ask again without it, and not again on this host.
 * @example refusedRunDetails({ status: 422, message: 'Invalid request.\n\n"return_run_details" is not a permitted key.' }) // true
 */
export function refusedRunDetails(answer: { status?: number | undefined; message: string }): boolean {
  return answer.status === 422 && answer.message.includes('return_run_details');
}

/**
 * The envelope with the message inline when `shape` says the request fits, else with a
 * `payloadRef` instead (the rule both kinds of dispatch share).
 */
function chooseEnvelope<B>(
  input: BuildDispatchInput,
  shape: (zekt: ZektEnvelope) => { body: B; bytes: number; fits: boolean },
): { body: B; bytes: number; byReference: boolean } {
  const envelope: ZektEnvelope = {
    version: 1,
    correlationId: input.correlationId,
    deliveryId: input.deliveryId,
    durable: input.durable,
    isReplay: input.isReplay,
    retry: input.retry,
    ...(input.token === undefined ? {} : { token: input.token }),
    ...(input.traceparent === undefined ? {} : { traceparent: input.traceparent }),
    // Only with the message it describes: a run without one has nothing to check.
    ...(input.schemaVersion == null || input.message === undefined
      ? {}
      : { schemaVersion: input.schemaVersion }),
    event: input.event,
  };
  if (input.message === undefined) {
    const { body, bytes } = shape(envelope);
    return { body, bytes, byReference: false };
  }
  const inline = shape({ ...envelope, payload: input.message.payload });
  if (inline.fits) return { body: inline.body, bytes: inline.bytes, byReference: false };
  const messageBytes = byteLength(JSON.stringify(input.message.payload));
  const { body, bytes } = shape({ ...envelope, payloadRef: { url: input.payloadUrl, bytes: messageBytes } });
  return { body, bytes, byReference: true };
}
