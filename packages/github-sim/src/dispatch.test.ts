import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, installationToken } from '../test/support/github-client.js';
import { createTestSimulator } from '../test/support/test-simulator.js';
import type { GitHubSimulator } from './index.js';

const DOCS = 'https://docs.github.com/rest/repos/repos#create-a-repository-dispatch-event';

let sim: GitHubSimulator;
let authorization: string;
beforeAll(async () => {
  sim = await createTestSimulator();
  const { installation } = await sim.createInstallation({
    account: { login: 'acme' },
    repositories: ['consumer'],
  });
  authorization = `token ${await installationToken(sim, installation.id)}`;
});
afterAll(() => sim.close());

function dispatch(body: unknown, rawBody?: string) {
  return api(
    sim,
    'POST',
    '/repos/acme/consumer/dispatches',
    rawBody === undefined ? { authorization, body } : { authorization, rawBody },
  );
}

function keys(count: number): Record<string, number> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));
}

describe('POST /repos/{owner}/{repo}/dispatches validation (GitHub’s limits and messages)', () => {
  it.each([
    ['no event_type', {}, 'Invalid request.\n\n"event_type" wasn\'t supplied.'],
    [
      'empty event_type',
      { event_type: '' },
      'Invalid request.\n\nAt least 1 character is required; only 0 were supplied.',
    ],
    [
      '101-character event_type',
      { event_type: 'e'.repeat(101) },
      'Invalid request.\n\nOnly 100 characters are allowed; 101 were supplied.',
    ],
    [
      'numeric event_type',
      { event_type: 5 },
      "Invalid request.\n\nFor 'properties/event_type', 5 is not a string.",
    ],
    [
      '11 top-level keys',
      { event_type: 'x', client_payload: keys(11) },
      'Invalid request.\n\nNo more than 10 properties are allowed; 11 were supplied.',
    ],
    [
      'client_payload as a string',
      { event_type: 'x', client_payload: '{"a":1}' },
      'Invalid request.\n\nFor \'properties/client_payload\', "{\\"a\\":1}" is not an object.',
    ],
    [
      'client_payload of 64 KB',
      { event_type: 'x', client_payload: { blob: 'x'.repeat(64 * 1024) } },
      'client_payload is too large.',
    ],
  ])('%s → 422', async (_name, body, message) => {
    const response = await dispatch(body);
    expect(response.status).toBe(422);
    expect(response.body).toEqual({ message, documentation_url: DOCS, status: '422' });
  });

  it('an empty body → 422 and malformed JSON → 400 Problems parsing JSON', async () => {
    const empty = await dispatch(undefined, '');
    expect(empty.status).toBe(422);
    expect(empty.body).toMatchObject({
      message: "Invalid request.\n\nFor 'links/0/schema', nil is not an object.",
    });
    const malformed = await dispatch(undefined, '{"event_type":');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ message: 'Problems parsing JSON' });
  });

  it('accepts exactly 100 characters and 10 keys (204, no body) and records them', async () => {
    const eventType = 'e'.repeat(100);
    const response = await dispatch({ event_type: eventType, client_payload: keys(10) });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
    const nearLimit = await dispatch({
      event_type: 'big',
      client_payload: { blob: 'x'.repeat(64 * 1024 - 20) },
    });
    expect(nearLimit.status).toBe(204);
    const recorded = sim.dispatches({ repository: 'acme/consumer' });
    expect(recorded.map((record) => record.eventType)).toEqual([eventType, 'big']);
    expect(recorded[0]?.clientPayload).toEqual(keys(10));
    expect(sim.dispatches({ repository: 'acme/elsewhere' })).toEqual([]);
  });
});
