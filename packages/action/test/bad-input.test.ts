import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PAYLOAD_LIMIT_BYTES } from '../src/message-input.js';
import { type Relay, startRelay } from './support/relay.js';
import { type ActionPath, type ActionStepResult, runActionStep } from './support/run-action.js';

/**
 * Bad input fails the step with a message about the input, before any request: the recorder
 * stands in for both the Zekt service and the Actions OIDC endpoint, and must see nothing.
 */
let recorder: Relay;
let env: Record<string, string>;

beforeAll(async () => {
  recorder = await startRelay();
  env = {
    ACTIONS_ID_TOKEN_REQUEST_URL: `${recorder.url}/_services/token/idtoken?api-version=2.0`,
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'request-token',
    GITHUB_REPOSITORY: 'acme/api',
    GITHUB_RUN_ID: '42',
  };
});
afterAll(() => recorder.close());
beforeEach(() => {
  recorder.requests.length = 0;
});

async function step(inputs: Record<string, string>, options: { action?: ActionPath; event?: unknown } = {}) {
  return runActionStep({ inputs: { 'zekt-api-url': recorder.url, ...inputs }, env, ...options });
}

function expectRefusedUnsent(result: ActionStepResult, ...messages: Array<string | RegExp>): void {
  expect(result.exitCode).toBe(1);
  expect(result.errors).toHaveLength(1);
  for (const message of messages) {
    if (typeof message === 'string') expect(result.errors[0]).toContain(message);
    else expect(result.errors[0]).toMatch(message);
  }
  expect(recorder.requests).toEqual([]);
  expect(result.outputs.status).toBe('failed');
}

function tempFile(content: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'zekt-bad-input-')), 'payload.json');
  writeFileSync(file, content);
  return file;
}

describe('message mode', () => {
  it('refuses a payload that is not JSON', async () => {
    expectRefusedUnsent(
      await step({ 'event-type': 'acme-deployed', payload: '{version: 1.2.3}' }),
      'payload is not valid JSON',
    );
  });

  it('refuses a payload over 512 KB serialized (given as a file: no process gets such an input)', async () => {
    const file = tempFile(JSON.stringify({ blob: 'x'.repeat(PAYLOAD_LIMIT_BYTES) }));
    expectRefusedUnsent(
      await step({ 'event-type': 'acme-deployed', 'payload-file': file }),
      `payload-file ${file} is ${PAYLOAD_LIMIT_BYTES + 11} bytes serialized; Zekt accepts at most 524288 bytes (512 KB)`,
    );
  });

  it('refuses a payload one byte over the limit, counted in UTF-8 bytes', async () => {
    // {"s":"é…"}: 8 bytes of JSON around the string, 2 bytes per é.
    const value = { s: `${'é'.repeat((PAYLOAD_LIMIT_BYTES - 8) / 2)}x` };
    const file = tempFile(JSON.stringify(value));
    expectRefusedUnsent(
      await step({ 'event-type': 'acme-deployed', 'payload-file': file }),
      `is ${PAYLOAD_LIMIT_BYTES + 1} bytes serialized`,
    );
  });

  it('refuses a message without an event type', async () => {
    expectRefusedUnsent(await step({ payload: '{}' }), 'event-type is required to send a message');
  });

  it('refuses an event type GitHub or Zekt would refuse', async () => {
    expectRefusedUnsent(await step({ 'event-type': 'deploy done!' }), `(found " !")`);
    expectRefusedUnsent(await step({ 'event-type': 'x'.repeat(101) }), 'at most 100');
  });

  it('refuses a JSON string payload that does not hold JSON (the service reads strings as JSON text)', async () => {
    expectRefusedUnsent(
      await step({ 'event-type': 'acme-deployed', payload: '"deployed"' }),
      'Zekt reads a string payload as JSON text',
    );
  });

  it('refuses payload and payload-file together, and a payload-file that is missing', async () => {
    expectRefusedUnsent(
      await step({ 'event-type': 'a', payload: '{"a":1}', 'payload-file': tempFile('{}') }),
      'not both',
    );
    expectRefusedUnsent(
      await step({ 'event-type': 'a', 'payload-file': '/nonexistent/message.json' }),
      'payload-file /nonexistent/message.json cannot be read',
    );
  });

  it('reports every problem at once', async () => {
    const result = await step({ 'zekt-api-url': '', payload: '[', 'retry-base-delay-ms': 'soon' });
    expectRefusedUnsent(
      result,
      'zekt-api-url is required',
      'there is no public default',
      'event-type is required',
      'payload is not valid JSON',
      'retry-base-delay-ms must be a whole number',
    );
  });

  it('refuses an endpoint given as zekt-api-url, and a URL that is not http(s)', async () => {
    expectRefusedUnsent(
      await step({ 'event-type': 'a', 'zekt-api-url': `${recorder.url}/api/events/receive` }),
      "zekt-api-url is the service's base URL",
    );
    expectRefusedUnsent(
      await step({ 'event-type': 'a', 'zekt-api-url': 'ftp://zekt' }),
      'must be an http(s) URL',
    );
  });

  it('refuses an unknown mode', async () => {
    expectRefusedUnsent(
      await step({ mode: 'publish' }),
      'mode must be one of message, confirm, complete, fetch-payload',
    );
  });
});

describe('consumer modes', () => {
  const dispatch = (zekt: Record<string, unknown>) => ({ action: 'acme-deployed', client_payload: { zekt } });
  const deliveryId = 'delivery-00000000-0000-4000-8000-000000000000';

  it('refuse to run outside a Zekt delivery', async () => {
    expectRefusedUnsent(await step({}, { action: 'confirm' }), 'GITHUB_EVENT_PATH is not set');
    expectRefusedUnsent(
      await step({}, { action: 'confirm', event: { action: 'opened', pull_request: {} } }),
      'github.event.client_payload.zekt is missing',
    );
    expectRefusedUnsent(
      await step({}, { action: 'complete', event: dispatch({ deliveryId }) }),
      'client_payload.zekt.correlationId is missing',
    );
  });

  it('complete refuses a success that is not a boolean', async () => {
    expectRefusedUnsent(
      await step(
        { success: 'yes' },
        { action: 'complete', event: dispatch({ correlationId: '42', deliveryId }) },
      ),
      'success must be true or false',
    );
  });

  it('auth: delivery-token refuses a delivery without a token (not durable)', async () => {
    expectRefusedUnsent(
      await step(
        { auth: 'delivery-token' },
        { action: 'confirm', event: dispatch({ correlationId: '42', deliveryId }) },
      ),
      'this delivery carries no token',
    );
    expectRefusedUnsent(await step({ auth: 'github-token' }, { action: 'confirm' }), 'auth must be one of');
  });

  it('fetch-payload never sends a token to a payloadRef outside zekt-api-url', async () => {
    const event = dispatch({
      correlationId: '42',
      deliveryId,
      payloadRef: { url: `http://attacker.example/api/deliveries/${deliveryId}/payload`, bytes: 100 },
    });
    expectRefusedUnsent(
      await step({}, { action: 'fetch-payload', event }),
      'is not on the Zekt service of zekt-api-url',
    );
  });
});
