import { readFileSync } from 'node:fs';

/**
 * What a consumer step needs from the delivery that started its run, read from the event file at
 * `GITHUB_EVENT_PATH`: `github.event.client_payload.zekt` of a `repository_dispatch`, or
 * the `zekt` input of a `workflow_dispatch` (the same object, as a JSON text).
 */
export interface ZektDelivery {
  /** The provider's run id; sent back as it came (string or number). */
  correlationId: string | number;
  deliveryId?: string;
  /** The per-delivery token; durable deliveries only. */
  token?: string;
  /** W3C trace context of the dispatch, when the Zekt service traces (step-trace.ts). */
  traceparent?: string;
  message: InlineMessage | ReferencedMessage | NoMessage;
}

export interface InlineMessage {
  kind: 'inline';
  payload: unknown;
}

export interface ReferencedMessage {
  kind: 'reference';
  url: string;
  bytes?: number;
}

export interface NoMessage {
  kind: 'none';
}

export type DeliveryResult = { ok: true; delivery: ZektDelivery } | { ok: false; problem: string };

const NOT_A_DISPATCH =
  'this step must run in a workflow started by a Zekt delivery (on: repository_dispatch, or on: workflow_dispatch with the zekt input), whose';

/** Reads and checks the event file. */
export function loadDelivery(eventPath: string | undefined): DeliveryResult {
  if (!eventPath)
    return { ok: false, problem: 'GITHUB_EVENT_PATH is not set: this step must run in a GitHub Actions job' };
  let event: unknown;
  try {
    event = JSON.parse(readFileSync(eventPath, 'utf8'));
  } catch (error) {
    return { ok: false, problem: `could not read the event file ${eventPath}: ${(error as Error).message}` };
  }
  return readDelivery(event);
}

/**
 * Extracts the delivery from the event that started the run (`github.event`): a
 * `repository_dispatch`'s `client_payload.zekt`, or a `workflow_dispatch`'s `inputs.zekt`.
 *
 * @example readDelivery({ action: 'acme-deployed', client_payload: { zekt: { correlationId: '42', deliveryId: 'delivery-…' } } })
 * @example readDelivery({ inputs: { zekt: '{"correlationId":"42","deliveryId":"delivery-…"}' }, workflow: '.github/workflows/on-zekt.yml' })
 */
export function readDelivery(event: unknown): DeliveryResult {
  const found = zektOf(event);
  if ('problem' in found) return { ok: false, problem: found.problem };
  const { zekt } = found;
  const where = `${NOT_A_DISPATCH} ${found.where}`;
  const { correlationId, deliveryId, token } = zekt;
  if (!(typeof correlationId === 'string' && correlationId !== '') && !Number.isSafeInteger(correlationId)) {
    return { ok: false, problem: `${where}.correlationId is missing or not a run id` };
  }
  if (deliveryId !== undefined && typeof deliveryId !== 'string') {
    return { ok: false, problem: `${where}.deliveryId is not a string` };
  }
  if (token !== undefined && typeof token !== 'string') {
    return { ok: false, problem: `${where}.token is not a string` };
  }
  let message: ZektDelivery['message'] = { kind: 'none' };
  // `payload` is present, possibly null, exactly when the provider sent a message that fitted.
  if ('payload' in zekt) {
    message = { kind: 'inline', payload: zekt.payload };
  } else if (zekt.payloadRef !== undefined) {
    const ref = zekt.payloadRef;
    if (!isObject(ref) || typeof ref.url !== 'string') {
      return { ok: false, problem: `${where}.payloadRef has no url` };
    }
    message = {
      kind: 'reference',
      url: ref.url,
      ...(typeof ref.bytes === 'number' ? { bytes: ref.bytes } : {}),
    };
  }
  return {
    ok: true,
    delivery: {
      correlationId: correlationId as string | number,
      ...(deliveryId === undefined ? {} : { deliveryId }),
      ...(token === undefined ? {} : { token }),
      ...(typeof zekt.traceparent === 'string' ? { traceparent: zekt.traceparent } : {}),
      message,
    },
  };
}

const INPUT = 'github.event.inputs.zekt';

/** The `zekt` object of either kind of delivery event and where it was, or what is wrong. */
function zektOf(event: unknown): { zekt: Record<string, unknown>; where: string } | { problem: string } {
  const clientPayload = isObject(event) ? event.client_payload : undefined;
  const inClientPayload = isObject(clientPayload) ? clientPayload.zekt : undefined;
  if (isObject(inClientPayload)) return { zekt: inClientPayload, where: 'github.event.client_payload.zekt' };
  const inputs = isObject(event) ? event.inputs : undefined;
  const input = isObject(inputs) ? inputs.zekt : undefined;
  if (input === undefined) {
    return { problem: `${NOT_A_DISPATCH} github.event.client_payload.zekt is missing (and so is ${INPUT})` };
  }
  const notObject = `${NOT_A_DISPATCH} ${INPUT} is not the JSON text of an object (declare it as a string input: on: workflow_dispatch: inputs: zekt: { required: true, type: string })`;
  if (typeof input !== 'string') return { problem: notObject };
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    return { problem: notObject };
  }
  return isObject(parsed) ? { zekt: parsed, where: INPUT } : { problem: notObject };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
