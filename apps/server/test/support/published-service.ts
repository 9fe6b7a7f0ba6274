import { expect } from 'vitest';
import type { JsonBody } from './processes.js';

/** A management API call that must succeed: its body, or the test fails with the answer. */
export type SucceedingCall = (
  method: string,
  path: string,
  token: string,
  body?: unknown,
) => Promise<JsonBody>;

/**
 * Turns `send` (how the suite reaches the API: the harness, or fetch to a process) into calls that
 * expect a 2xx answer, naming the call and its body when one is not.
 */
export function succeeding(
  send: (
    method: string,
    path: string,
    token: string,
    body: unknown,
  ) => Promise<{ status: number; body: JsonBody }>,
): SucceedingCall {
  return async (method, path, token, body) => {
    const response = await send(method, path, token, body);
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
    return response.body;
  };
}

/**
 * acme/api's deploy.yml as the provider (`token`) publishes it: the repository a provider, the
 * workflow whitelisted, and a published service named `slug`, which it returns.
 */
export async function publishAcmeDeploys(ok: SucceedingCall, token: string, slug: string) {
  await ok('PUT', '/api/v1/repositories/acme/api/provider', token, { enabled: true });
  await ok('PUT', '/api/v1/repositories/acme/api/workflows/deploy.yml', token, { whitelisted: true });
  return ok('POST', '/api/v1/services', token, {
    repository: 'acme/api',
    workflow: 'deploy.yml',
    slug,
    published: true,
  });
}
