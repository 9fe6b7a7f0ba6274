import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as core from '@actions/core';
import { getConsumerCredential } from './consumer-auth.js';
import { loadDelivery, type ZektDelivery } from './dispatch-event.js';
import { type ActionInputs, endpoint } from './inputs.js';
import { writeSummary } from './summary.js';
import { callZekt, describeProblem, problemOf } from './zekt-client.js';

type ConsumerInputs = Exclude<ActionInputs, { mode: 'message' }>;

/**
 * The consumer modes: `confirm` as the first step of a consumer workflow, `complete` as
 * its last (`if: always()`), `fetch-payload` for the message, inline or by reference.
 */
export async function runConsumerStep(
  inputs: ConsumerInputs,
  env: Record<string, string | undefined>,
): Promise<void> {
  const loaded = loadDelivery(env.GITHUB_EVENT_PATH);
  if (!loaded.ok) throw new Error(loaded.problem);
  const delivery = loaded.delivery;
  // The delivery token is a credential: mask it before anything could print it.
  if (delivery.token) core.setSecret(delivery.token);
  if (delivery.deliveryId) core.setOutput('delivery-id', delivery.deliveryId);

  if (inputs.mode === 'fetch-payload' && delivery.message.kind !== 'reference') {
    // Nothing to fetch: no credential needed, so no OIDC token is requested.
    const payload = delivery.message.kind === 'inline' ? delivery.message.payload : null;
    if (delivery.message.kind === 'none') {
      core.warning('this delivery carries no message (the provider run sent none): payload is null');
    }
    await publishPayload(
      inputs.path,
      payload,
      delivery.message.kind === 'inline' ? 'inline' : 'absent',
      delivery,
    );
    return;
  }
  if (inputs.mode === 'fetch-payload' && delivery.message.kind === 'reference') {
    checkSameService(delivery.message.url, inputs.apiUrl);
  }

  const credential = await getConsumerCredential({
    auth: inputs.auth,
    audience: inputs.audience,
    delivery,
    getIdToken: (audience) => core.getIDToken(audience),
    warn: core.warning,
  });
  core.info(
    `Authenticating as ${credential.kind === 'oidc' ? "this job's OIDC token" : "the delivery's token"}`,
  );
  const call = (request: Parameters<typeof callZekt>[0]) =>
    callZekt(request, { baseDelayMs: inputs.retryBaseDelayMs, onRetry: core.warning });

  switch (inputs.mode) {
    case 'confirm':
    case 'complete': {
      const url = endpoint(inputs.apiUrl, `/api/event-delivery/${inputs.mode}`);
      const body = {
        correlationId: delivery.correlationId,
        ...(delivery.deliveryId ? { deliveryId: delivery.deliveryId } : {}),
        ...(inputs.mode === 'complete' ? { success: inputs.success } : {}),
      };
      const response = await call({ method: 'POST', url, token: credential.token, body });
      const what = inputs.mode === 'confirm' ? 'confirm' : `complete (success: ${inputs.success})`;
      let status: string;
      if (response.status === 200) {
        status = deliveryStatusOf(response.body) ?? 'unknown';
        core.info(`${describe(delivery)}: ${what} → ${status}`);
      } else if (response.status === 409 && problemOf(response.body).code === 'already_final') {
        // The completion-tracking webhook may have finished the delivery first, or a
        // re-run repeats the step: the record is final either way, which is what this step wants.
        status = deliveryStatusOf((response.body as { record?: unknown }).record) ?? 'final';
        core.info(
          `${describe(delivery)} is already ${status}; nothing to ${inputs.mode} (${problemOf(response.body).detail ?? 'already_final'})`,
        );
      } else {
        throw new Error(
          `Zekt refused ${what} of ${describe(delivery)} (${response.status})${describeProblem(response.body, ': ')}`,
        );
      }
      core.setOutput('status', status);
      await writeSummary(`Zekt delivery ${inputs.mode === 'confirm' ? 'confirmed' : 'completed'}`, [
        ['Delivery', delivery.deliveryId ?? '—'],
        ['Correlation id', String(delivery.correlationId)],
        ['Status', status],
      ]);
      return;
    }
    case 'fetch-payload': {
      if (delivery.message.kind !== 'reference') return;
      const url = delivery.message.url;
      core.info(`Fetching the message of ${describe(delivery)} from ${url}`);
      const response = await call({ method: 'GET', url, token: credential.token });
      if (response.status !== 200) {
        throw new Error(
          `Zekt refused the payload of ${describe(delivery)} (${response.status})${describeProblem(response.body, ': ')}`,
        );
      }
      let payload: unknown;
      try {
        payload = JSON.parse(response.text);
      } catch {
        throw new Error(
          `the payload Zekt returned for ${describe(delivery)} is not JSON: ${response.text.slice(0, 200)}`,
        );
      }
      await publishPayload(inputs.path, payload, 'fetched', delivery);
      return;
    }
  }
}

async function publishPayload(path: string, payload: unknown, status: string, delivery: ZektDelivery) {
  const json = JSON.stringify(payload);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, json);
  core.setOutput('payload', json);
  core.setOutput('payload-path', path);
  core.setOutput('status', status);
  core.info(`The message (${Buffer.byteLength(json)} bytes, ${status}) is in ${path}`);
  await writeSummary('Zekt message received', [
    ['Delivery', delivery.deliveryId ?? '—'],
    ['Message', `${Buffer.byteLength(json)} bytes, ${status}`],
    ['File', path],
  ]);
}

/**
 * The token goes wherever `payloadRef.url` points, and anyone who can write to the repository can
 * send a `repository_dispatch` with a forged one: only the service named by `zekt-api-url` gets it.
 */
function checkSameService(url: string, apiUrl: URL): void {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new Error(`client_payload.zekt.payloadRef.url is not a URL: ${JSON.stringify(url)}`);
  }
  if (target.origin !== apiUrl.origin) {
    throw new Error(
      `client_payload.zekt.payloadRef.url (${target.origin}) is not on the Zekt service of zekt-api-url (${apiUrl.origin}); the token is only sent there. Set zekt-api-url to the service's ZEKT_BASE_URL`,
    );
  }
}

function deliveryStatusOf(record: unknown): string | undefined {
  const status = (record as { deliveryStatus?: unknown } | null | undefined)?.deliveryStatus;
  return typeof status === 'string' ? status : undefined;
}

function describe(delivery: ZektDelivery): string {
  return delivery.deliveryId ?? `the delivery of run ${delivery.correlationId}`;
}
