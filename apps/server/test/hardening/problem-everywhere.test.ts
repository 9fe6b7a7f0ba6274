import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpWorld, type World } from '../support/demo-world.js';
import { type Harness, startHarness } from '../support/harness.js';
import { RawConnection, requestHead } from '../support/raw-http.js';

/**
 * Every error the server answers is problem+json with a stable code, including
 * the ones Fastify and Node produce before a route runs.
 */
let h: Harness;
let world: World;
beforeAll(async () => {
  h = await startHarness();
  world = await setUpWorld(h);
});
afterAll(async () => {
  await h.close();
});

async function expectProblem(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  expect(await response.json()).toMatchObject({ status, code, type: `https://zekt.dev/problems/${code}` });
}

describe('errors before a route runs', () => {
  it('bad percent-encoding in a path is 400 invalid_request', async () => {
    const auth = { authorization: `Bearer ${world.providerToken}` };
    await expectProblem(
      await fetch(`${h.url}/api/v1/services/%ff`, { headers: auth }),
      400,
      'invalid_request',
    );
    await expectProblem(
      await fetch(`${h.url}/api/replay/%E0%A4%A`, { method: 'POST', headers: auth }),
      400,
      'invalid_request',
    );
  });

  it('a path parameter over 100 characters is 414 uri_too_long', async () => {
    const long = 'x'.repeat(150);
    await expectProblem(
      await fetch(`${h.url}/api/v1/repositories/${long}/api/provider`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${world.providerToken}`, 'content-type': 'application/json' },
        body: '{"enabled":true}',
      }),
      414,
      'uri_too_long',
    );
    await expectProblem(await fetch(`${h.url}/api/replay/${long}`, { method: 'POST' }), 414, 'uri_too_long');
  });

  it('a text/plain body is 415 unsupported_media_type, as the docs promise', async () => {
    await expectProblem(
      await fetch(`${h.url}/api/v1/services`, {
        method: 'POST',
        headers: { authorization: `Bearer ${world.providerToken}`, 'content-type': 'text/plain' },
        body: 'hello',
      }),
      415,
      'unsupported_media_type',
    );
  });

  it('a request that is not HTTP, or whose headers are too large, gets a problem too', async () => {
    const garbage = await RawConnection.open(h.url);
    garbage.write('HELLO THERE\r\n\r\n');
    const bad = await garbage.response();
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toContain('application/problem+json');
    expect(JSON.parse(bad.body).code).toBe('invalid_request');

    const huge = await RawConnection.open(h.url);
    huge.write(requestHead('GET', '/healthz', { host: 'x', 'x-padding': 'p'.repeat(20_000) }));
    const tooLarge = await huge.response();
    expect(tooLarge.status).toBe(431);
    expect(tooLarge.headers['content-type']).toContain('application/problem+json');
    expect(JSON.parse(tooLarge.body).code).toBe('headers_too_large');
  });

  it('a NUL character in a path, query or field is 400 on either store, never 500 (found by fuzzing)', async () => {
    const auth = { authorization: `Bearer ${world.providerToken}` };
    await expectProblem(
      await fetch(`${h.url}/api/v1/repositories//%00/workflows`, { headers: auth }),
      400,
      'invalid_request',
    );
    await expectProblem(
      await fetch(`${h.url}/api/v1/directory?q=%00`, { headers: auth }),
      400,
      'invalid_request',
    );
    await expectProblem(
      await fetch(`${h.url}/api/v1/services/${world.serviceId}`, {
        method: 'PATCH',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ description: 'a\u0000b' }),
      }),
      400,
      'invalid_request',
    );
  });

  it('every answer carries nosniff', async () => {
    for (const path of ['/healthz', '/api/v1/me', '/nope']) {
      expect((await fetch(`${h.url}${path}`)).headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
});
