import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Harness, startHarness } from '../support/harness.js';
import { RawConnection, requestHead } from '../support/raw-http.js';

/**
 * Request bodies cannot exhaust memory or hold connections open. Bytes
 * in flight are capped per route (503 + Retry-After beyond the cap), bodies the headers already
 * condemn are refused before they are read, and a body must arrive within the request timeout.
 */
let h: Harness;
const BUDGET = 1024 * 1024;
beforeAll(async () => {
  h = await startHarness({
    env: { ZEKT_BODY_BYTES_IN_FLIGHT: String(BUDGET), ZEKT_REQUEST_TIMEOUT_MS: '1000' },
  });
});
afterAll(async () => {
  await h.close();
});

const webhookHead = (headers: Record<string, string | number>) =>
  requestHead('POST', '/webhooks/github', {
    host: '127.0.0.1',
    'content-type': 'application/json',
    'x-github-event': 'ping',
    'x-github-delivery': 'd-1',
    ...headers,
  });
const signature = { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` };

function problemOf(response: { headers: Record<string, string>; body: string }) {
  expect(response.headers['content-type']).toContain('application/problem+json');
  return JSON.parse(response.body) as { code: string };
}

describe('bodies refused before they are read', () => {
  it('an unsigned webhook is answered 401 from its headers alone', async () => {
    const connection = await RawConnection.open(h.url);
    connection.write(webhookHead({ 'content-length': 20 * 1024 * 1024 }));
    const response = await connection.response();
    expect(response.status).toBe(401);
    expect(problemOf(response).code).toBe('invalid_signature');
    connection.close();
  });

  it('a body longer than the route accepts is answered 413 from Content-Length', async () => {
    const connection = await RawConnection.open(h.url);
    connection.write(webhookHead({ ...signature, 'content-length': 26 * 1024 * 1024 }));
    const response = await connection.response();
    expect(response.status).toBe(413);
    expect(problemOf(response).code).toBe('payload_too_large');
    connection.close();
  });
});

describe('bytes in flight per route', () => {
  it('answers 503 with Retry-After when a body would exceed the route’s budget, and recovers', async () => {
    const holder = await RawConnection.open(h.url);
    holder.write(webhookHead({ ...signature, 'content-length': 700 * 1024 }));
    holder.write(Buffer.alloc(1024, 0x20));
    // The holder's bytes are reserved once the server has begun to read its body.
    await eventually(async () => {
      const probe = await RawConnection.open(h.url);
      probe.write(webhookHead({ ...signature, 'content-length': 700 * 1024 }));
      probe.write(Buffer.alloc(700 * 1024, 0x20));
      const response = await probe.response().catch(() => undefined);
      probe.close();
      return response?.status === 503 ? response : undefined;
    }).then((response) => {
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
      expect(problemOf(response).code).toBe('server_unavailable');
    });

    // A chunked body is counted as it arrives.
    const chunked = await RawConnection.open(h.url);
    chunked.write(webhookHead({ ...signature, 'transfer-encoding': 'chunked' }));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    for (let i = 0; i < 8 && !chunked.answered && !chunked.closed; i++) {
      chunked.write(`${chunk.length.toString(16)}\r\n`);
      chunked.write(chunk);
      chunked.write('\r\n');
      // Give the server a moment to answer before the next chunk: writing into a connection it has
      // already answered and closed would reset it and lose the answer.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const refused = await chunked.response();
    expect(refused.status).toBe(503);
    chunked.close();

    // Another route has its own budget.
    expect((await h.call('GET', '/api/v1/me')).status).toBe(401);

    holder.write(Buffer.alloc(699 * 1024, 0x20));
    const held = await holder.response();
    expect(held.status).toBe(401);
    holder.close();
    const after = await fetch(`${h.url}/webhooks/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': 'ping', ...signature },
      body: JSON.stringify({ padding: 'x'.repeat(700 * 1024) }),
    });
    expect(after.status).toBe(401);
  });
});

describe('slow bodies', () => {
  it('are cut at the request timeout with 408, as problem+json', async () => {
    const connection = await RawConnection.open(h.url);
    connection.write(webhookHead({ ...signature, 'content-length': 100_000 }));
    connection.write('{');
    // One byte now and then, for far longer than the timeout, until the server answers.
    for (let i = 0; i < 400 && !connection.answered && !connection.closed; i++) {
      connection.write(' ');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const response = await connection.response();
    expect(response.status).toBe(408);
    expect(problemOf(response).code).toBe('request_timeout');
    connection.close();
  });
});
