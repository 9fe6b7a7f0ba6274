import { CompactSign, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpWorld } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';

/** `POST /api/events/receive`: every refusal is problem+json with a stable code, never a 500. */
describe('message ingestion', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ transport: 'inject' });
    await setUpWorld(h);
  });
  afterAll(async () => {
    await h.close();
  });

  let nextRunId = 7_000_000_000;
  const mint = (
    overrides: Record<string, unknown> = {},
    options: { repository?: string; audience?: string } = {},
  ) =>
    h.sim.mintOidcToken({
      repository: options.repository ?? 'acme/api',
      workflow: 'deploy.yml',
      runId: nextRunId++,
      ...(options.audience ? { audience: options.audience } : {}),
      overrides,
    });
  const send = (token: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
    h.call('POST', '/api/events/receive', {
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body,
    });
  const messageCount = async () =>
    (await h.zekt.store.db.selectFrom('messages').select('message_id').execute()).length;

  async function expectProblem(response: Awaited<ReturnType<typeof send>>, status: number, code: string) {
    expect(response.status).toBe(status);
    expect(response.contentType).toContain('application/problem+json');
    expect(response.body).toMatchObject({ status, code, type: expect.stringContaining(code) });
    expect(typeof response.body.detail).toBe('string');
  }

  it('stores a message and counts the consumers that will receive it', async () => {
    const before = await messageCount();
    const response = await send(
      await mint(),
      { eventType: 'deployed', payload: '{"v":1}', repository: 'acme/api' },
      {
        'x-github-repository': 'acme/api',
      },
    );
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      success: true,
      eventId: expect.stringMatching(/^msg_/),
      consumersNotified: 1,
      message: expect.any(String),
    });
    expect(await messageCount()).toBe(before + 1);
  });

  it('refuses missing, expired, foreign, forged and unsigned tokens with 401', async () => {
    const now = Math.floor(Date.now() / 1000);
    const before = await messageCount();
    const body = { eventType: 'deployed', payload: {} };
    await expectProblem(await send(undefined, body), 401, 'invalid_token');
    await expectProblem(
      await send(await mint({ iat: now - 7200, nbf: now - 7500, exp: now - 3600 }), body),
      401,
      'invalid_token',
    );
    await expectProblem(
      await send(await mint({}, { audience: 'https://github.com/acme' }), body),
      401,
      'invalid_token',
    );
    await expectProblem(
      await send(await mint({ iss: 'https://token.actions.githubusercontent.com' }), body),
      401,
      'invalid_token',
    );

    const genuine = await mint();
    const [header, payload] = genuine.split('.') as [string, string, string];
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new CompactSign(Buffer.from(payload, 'base64url'))
      .setProtectedHeader(JSON.parse(Buffer.from(header, 'base64url').toString()))
      .sign(privateKey);
    await expectProblem(await send(forged, body), 401, 'invalid_token');
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    const response = await send(unsigned, body);
    await expectProblem(response, 401, 'invalid_token');
    expect(response.body.reason).toBe('algorithm_not_allowed');
    expect(await messageCount()).toBe(before);
  });

  it('refuses a body that claims another repository or run than the token (403)', async () => {
    const before = await messageCount();
    await expectProblem(
      await send(await mint(), { eventType: 'x', payload: {}, repository: 'acme/web' }),
      403,
      'repository_mismatch',
    );
    await expectProblem(
      await send(await mint(), { eventType: 'x', payload: {} }, { 'x-github-repository': 'evil/repo' }),
      403,
      'repository_mismatch',
    );
    await expectProblem(
      await send(await mint(), { eventType: 'x', payload: {}, workflowRunId: '1' }),
      403,
      'repository_mismatch',
    );
    expect(await messageCount()).toBe(before);
  });

  it('refuses oversized messages with 413', async () => {
    const before = await messageCount();
    const response = await send(await mint(), {
      eventType: 'big',
      payload: { blob: 'x'.repeat(512 * 1024) },
    });
    await expectProblem(response, 413, 'payload_too_large');
    expect(response.body.detail).toContain('512 KB');
    await expectProblem(
      await send(await mint(), { eventType: 'huge', payload: 'y'.repeat(3 * 1024 * 1024) }),
      413,
      'payload_too_large',
    );
    const justUnder = await send(await mint(), {
      eventType: 'fits',
      payload: { blob: 'x'.repeat(512 * 1024 - 12) },
    });
    expect(justUnder.status).toBe(201);
    expect(await messageCount()).toBe(before + 1);
  });

  it('refuses invalid event types and payloads with 400', async () => {
    const before = await messageCount();
    await expectProblem(await send(await mint(), { payload: {} }), 400, 'invalid_event_type');
    await expectProblem(await send(await mint(), { eventType: '', payload: {} }), 400, 'invalid_event_type');
    await expectProblem(
      await send(await mint(), { eventType: 'x'.repeat(101), payload: {} }),
      400,
      'invalid_event_type',
    );
    await expectProblem(
      await send(await mint(), { eventType: 'spaces are bad', payload: {} }),
      400,
      'invalid_event_type',
    );
    await expectProblem(
      await send(await mint(), { eventType: 'ok', payload: '{not json' }),
      400,
      'invalid_payload',
    );
    const notObject = await h.call('POST', '/api/events/receive', {
      headers: { authorization: `Bearer ${await mint()}` },
      body: ['an', 'array'],
    });
    await expectProblem(notObject, 400, 'invalid_request');
    const rawBad = await fetch(`${h.url}/api/events/receive`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await mint()}`, 'content-type': 'application/json' },
      body: '{"eventType": ',
    });
    expect(rawBad.status).toBe(400);
    expect(((await rawBad.json()) as { code: string }).code).toBe('malformed_json');
    expect(await messageCount()).toBe(before);
  });

  it('refuses a repository that is not enabled as a provider (404)', async () => {
    await expectProblem(
      await send(await mint({}, { repository: 'acme/web' }), { eventType: 'x', payload: {} }),
      404,
      'repository_not_enabled',
    );
    await expectProblem(
      await send(await mint({ repository_id: '99999999' }, { repository: 'acme/api' }), {
        eventType: 'x',
        payload: {},
      }),
      404,
      'repository_not_enabled',
    );
  });

  it('replaces a message until the run is routed, then refuses with 409', async () => {
    const runId = nextRunId++;
    const token = await h.sim.mintOidcToken({ repository: 'acme/api', workflow: 'deploy.yml', runId });
    expect((await send(token, { eventType: 'first', payload: { n: 1 } })).status).toBe(201);
    const replaced = await send(token, { eventType: 'second', payload: { n: 2 } });
    expect(replaced.status).toBe(201);
    expect(replaced.body.message).toContain('replaced');
    const stored = await h.zekt.store.db
      .selectFrom('messages')
      .selectAll()
      .where('run_id', '=', runId)
      .execute();
    expect(stored.map((m) => m.event_type)).toEqual(['second']);
    // Another run completes and is routed; a message for it arrives too late.
    const run = await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
    const late = await h.sim.mintOidcToken({
      repository: 'acme/api',
      workflow: 'deploy.yml',
      runId: run.run.id,
    });
    await eventually(async () => {
      const event = await h.zekt.store.db
        .selectFrom('events')
        .select('route_status')
        .where('run_id', '=', run.run.id)
        .executeTakeFirst();
      return event?.route_status === 'routed' ? true : undefined;
    });
    await expectProblem(await send(late, { eventType: 'too-late', payload: {} }), 409, 'run_already_routed');
  });
});
