import { afterEach, describe, expect, it } from 'vitest';
import { type HttpRecorder, startHttpRecorder } from '../../test/support/http-recorder.js';
import { freePort } from '../free-port.js';
import { createZektClient, ok, ZektApiError } from './zekt-client.js';

let api: HttpRecorder | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function failureOf(call: Promise<unknown>): Promise<ZektApiError> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ZektApiError);
  return error as ZektApiError;
}

describe('createZektClient', () => {
  it('sends the token and the typed path and query, and gives the answer', async () => {
    api = await startHttpRecorder(200, { deliveries: [], nextCursor: null });
    const client = createZektClient({ baseUrl: `${api.url}/`, token: 'zkt_test' });
    const page = await ok(
      client.GET('/api/v1/deliveries', { params: { query: { status: 'Failed', limit: '5' } } }),
    );
    expect(page).toEqual({ deliveries: [], nextCursor: null });
    await ok(client.GET('/api/v1/deliveries/{deliveryId}', { params: { path: { deliveryId: 'a/b c' } } }));
    expect(api.requests).toEqual([
      { method: 'GET', path: '/api/v1/deliveries?status=Failed&limit=5', authorization: 'Bearer zkt_test' },
      { method: 'GET', path: '/api/v1/deliveries/a%2Fb%20c', authorization: 'Bearer zkt_test' },
    ]);
  });

  it('throws a problem answer as a ZektApiError with its code', async () => {
    api = await startHttpRecorder(404, {
      type: 'https://zekt.dev/problems/not_found',
      title: 'Not found',
      status: 404,
      detail: 'no delivery d-1 of yours',
      code: 'not_found',
    });
    const client = createZektClient({ baseUrl: api.url, token: 'zkt_test' });
    const error = await failureOf(
      client.GET('/api/v1/deliveries/{deliveryId}', { params: { path: { deliveryId: 'd-1' } } }),
    );
    expect(error.status).toBe(404);
    expect(error.code).toBe('not_found');
    expect(error.message).toBe('GET /api/v1/deliveries/d-1 answered 404: no delivery d-1 of yours');
  });

  it('throws an answer that is no problem with code error, and the status as its detail', async () => {
    api = await startHttpRecorder(502);
    const client = createZektClient({ baseUrl: api.url });
    const error = await failureOf(client.GET('/api/v1/me'));
    expect(error.status).toBe(502);
    expect(error.code).toBe('error');
    expect(error.message).toBe('GET /api/v1/me answered 502: Bad Gateway');
  });

  it('throws a request that reaches nothing with code network', async () => {
    const client = createZektClient({ baseUrl: `http://127.0.0.1:${await freePort()}` });
    const error = await failureOf(client.GET('/api/v1/me'));
    expect(error.status).toBe(0);
    expect(error.code).toBe('network');
  });
});
