import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setUpWorld, type World } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';

/**
 * Event contracts through the API (docs/contracts.md): saving a service's message schema and its
 * versions, what each enforcement does to a run's message (and to a run without one), what the
 * consumer receives, and every bad input answered with its problem, never a stalled server.
 */
let h: Harness;
let world: World;

beforeEach(async () => {
  h = await startHarness({ transport: 'inject', env: { ZEKT_SCHEMA_VALIDATION_TIMEOUT_MS: '300' } });
  world = await setUpWorld(h);
});
afterEach(async () => {
  await h.close();
});

const deploySchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['version', 'environment'],
  properties: {
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$' },
    environment: { enum: ['staging', 'production'] },
    notes: { type: 'array', items: { type: 'string' } },
  },
};
const good = { version: '1.2.3', environment: 'production' };

const putSchema = (body: unknown, options: { token?: string; query?: string; serviceId?: string } = {}) =>
  h.call('PUT', `/api/v1/services/${options.serviceId ?? world.serviceId}/schema${options.query ?? ''}`, {
    token: options.token ?? world.providerToken,
    body,
  });

async function saved(body: unknown, query = '') {
  const response = await putSchema(body, { query });
  if (response.status !== 200)
    throw new Error(`PUT schema → ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** A provider run of acme/api's deploy.yml that sends `payload` (or no message) and completes. */
function run(payload: unknown) {
  return h.sim.runWorkflow({
    repository: 'acme/api',
    workflow: 'deploy.yml',
    ...(payload === undefined ? {} : { message: { zektUrl: h.url, eventType: 'acme-deployed', payload } }),
  });
}

async function eventOf(runId: number) {
  return eventually(async () => {
    const row = await h.zekt.store.db
      .selectFrom('events')
      .selectAll()
      .where('run_id', '=', runId)
      .where('route_status', '!=', 'pending')
      .executeTakeFirst();
    return row ?? undefined;
  });
}

// biome-ignore lint/suspicious/noExplicitAny: the message step's answer, read field by field.
const bodyOf = (result: { message: { body: unknown } | null }) => result.message?.body as any;

const dispatchesToGlobex = () => h.sim.dispatches({ repository: 'globex/app' });

async function usage(token: string) {
  const response = await h.call('GET', '/api/v1/usage', { token });
  return response.body.usage[0].counters;
}

describe('saving a schema', () => {
  it('saves version 1 with its enforcement; the service, the Directory and GET show it', async () => {
    const body = await saved({ schema: deploySchema, enforcement: 'enforce', example: good });
    expect(body).toMatchObject({
      serviceId: world.serviceId,
      version: 1,
      enforcement: 'enforce',
      schema: deploySchema,
      example: good,
      requiresMessage: true,
      compatibility: { previousVersion: null, breaking: false, changes: [] },
      createdBy: 'alice',
      changed: true,
      saved: true,
    });
    const service = await h.call('GET', `/api/v1/services/${world.serviceId}`, {
      token: world.providerToken,
    });
    expect(service.body).toMatchObject({ schemaVersion: 1, enforcement: 'enforce' });
    const directory = await h.call('GET', '/api/v1/directory', { token: world.consumerToken });
    expect(directory.body.services[0]).toMatchObject({
      slug: 'acme-deploys',
      schemaVersion: 1,
      enforcement: 'enforce',
    });
    // The consumer reads it from the Directory, without who saved it.
    const read = await h.call('GET', `/api/v1/directory/${world.serviceId}/schema`, {
      token: world.consumerToken,
    });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      version: 1,
      schema: deploySchema,
      example: good,
      enforcement: 'enforce',
    });
    expect(read.body.createdBy).toBeUndefined();
    const own = await h.call('GET', `/api/v1/services/${world.serviceId}/schema?version=1`, {
      token: world.providerToken,
    });
    expect(own.body).toMatchObject({ version: 1, createdBy: 'alice' });
  });

  it('changes only the enforcement without a new version, and audits both kinds of change', async () => {
    await saved({ schema: deploySchema, enforcement: 'warn' });
    const body = await saved({ enforcement: 'enforce' });
    expect(body).toMatchObject({ version: 1, enforcement: 'enforce', changed: false });
    // The same schema again is no new version either.
    expect(await saved({ schema: deploySchema })).toMatchObject({ version: 1, changed: false });
    const audit = await h.call('GET', '/api/v1/audit', { token: world.providerToken });
    const actions = audit.body.entries.map((e: { action: string }) => e.action);
    expect(actions).toContain('service.schema_version');
    expect(actions).toContain('service.schema_enforcement');
  });

  it('refuses a schema that is not valid 2020-12, with the pointer of the problem', async () => {
    const response = await putSchema({ schema: { properties: { version: { type: 'strin' } } } });
    expect(response.status).toBe(400);
    expect(response.contentType).toContain('application/problem+json');
    expect(response.body).toMatchObject({ code: 'invalid_schema', pointer: '/properties/version/type' });
    const other = await putSchema({ schema: { $schema: 'http://json-schema.org/draft-07/schema#' } });
    expect(other.body).toMatchObject({ code: 'invalid_schema', pointer: '/$schema' });
  });

  it('refuses a remote $ref without fetching it', async () => {
    let fetched = false;
    const remote = await import('node:http').then(({ createServer }) =>
      createServer((_req, res) => {
        fetched = true;
        res.end('{}');
      }),
    );
    await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
    const { port } = remote.address() as { port: number };
    try {
      const response = await putSchema({
        schema: { properties: { deploy: { $ref: `http://127.0.0.1:${port}/deploy.json` } } },
      });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'invalid_schema', pointer: '/properties/deploy/$ref' });
      expect(response.body.detail).toContain('only local references');
      expect(fetched).toBe(false);
    } finally {
      remote.close();
    }
  });

  it('refuses a schema over 64 KB with 413', async () => {
    const properties = Object.fromEntries(
      Array.from({ length: 700 }, (_, i) => [`field${i}`, { type: 'string', description: 'd'.repeat(80) }]),
    );
    const response = await putSchema({ schema: { type: 'object', properties } });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('schema_too_large');
  });

  it('refuses a pattern that needs backtracking, and an example that does not match', async () => {
    const lookahead = await putSchema({
      schema: { properties: { v: { type: 'string', pattern: '^(?=a)a+$' } } },
    });
    expect(lookahead.status).toBe(400);
    expect(lookahead.body).toMatchObject({ code: 'invalid_schema', pointer: '/properties/v/pattern' });
    const example = await putSchema({ schema: deploySchema, example: { version: 'x', environment: 'dev' } });
    expect(example.status).toBe(400);
    expect(example.body).toMatchObject({
      code: 'invalid_example',
      errors: [
        { pointer: '/version', message: 'must match pattern "^\\d+\\.\\d+\\.\\d+$"' },
        { pointer: '/environment', message: 'must be one of "staging", "production"' },
      ],
    });
  });

  it("answers 404 for another account's service, and for a service the Directory does not show", async () => {
    await saved({ schema: deploySchema, enforcement: 'warn' });
    const put = await putSchema({ schema: deploySchema }, { token: world.consumerToken });
    expect(put.status).toBe(404);
    expect(put.body.code).toBe('service_not_found');
    const get = await h.call('GET', `/api/v1/services/${world.serviceId}/schema`, {
      token: world.consumerToken,
    });
    expect(get.status).toBe(404);
    expect(get.body.code).toBe('service_not_found');
    // Unpublished: gone from the Directory, and so is its schema.
    await h.call('PATCH', `/api/v1/services/${world.serviceId}`, {
      token: world.providerToken,
      body: { published: false },
    });
    const hidden = await h.call('GET', `/api/v1/directory/${world.serviceId}/schema`, {
      token: world.consumerToken,
    });
    expect(hidden.status).toBe(404);
    expect(await h.zekt.store.db.selectFrom('service_schemas').select('version').execute()).toHaveLength(1);
  });
});

describe('versions and breaking changes', () => {
  it('reports a breaking change before saving, refuses it unless accepted, then alerts subscribers', async () => {
    await saved({ schema: deploySchema, enforcement: 'enforce' });
    const breaking = {
      ...deploySchema,
      required: ['version', 'environment', 'commit'],
      properties: {
        version: deploySchema.properties.version,
        environment: { enum: ['production'] },
        commit: {},
      },
    };
    const dry = await saved({ schema: breaking }, '?dryRun=true');
    expect(dry).toMatchObject({ version: 2, changed: true, saved: false });
    expect(dry.compatibility.breaking).toBe(true);
    expect(
      dry.compatibility.changes.map((c: { kind: string; pointer: string }) => [c.kind, c.pointer]),
    ).toEqual([
      ['enum_narrowed', '/properties/environment/enum'],
      ['property_removed', '/properties/notes'],
      ['property_added', '/properties/commit'],
      ['required_added', '/required'],
    ]);
    // A dry run saves nothing.
    const still = await h.call('GET', `/api/v1/services/${world.serviceId}/schema`, {
      token: world.providerToken,
    });
    expect(still.body.version).toBe(1);

    const refused = await putSchema({ schema: breaking });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'breaking_schema_change', compatibility: { breaking: true } });

    const accepted = await saved({ schema: breaking, acceptBreaking: true });
    expect(accepted).toMatchObject({
      version: 2,
      saved: true,
      compatibility: { previousVersion: 1, breaking: true },
    });
    const alerts = await h.call('GET', '/api/v1/alerts', { token: world.consumerToken });
    const alert = alerts.body.alerts.find((a: { kind: string }) => a.kind === 'service.schema_changed');
    expect(alert).toMatchObject({
      account: 'globex',
      data: {
        service: 'acme-deploys',
        provider: 'acme',
        schemaVersion: 2,
        compatibility: { breaking: true },
      },
    });
    // The provider gets no alert of its own; both versions stay readable.
    const providerAlerts = await h.call('GET', '/api/v1/alerts', { token: world.providerToken });
    expect(providerAlerts.body.alerts).toEqual([]);
    const v1 = await h.call('GET', `/api/v1/services/${world.serviceId}/schema?version=1`, {
      token: world.providerToken,
    });
    expect(v1.body.schema).toEqual(deploySchema);
    const versions = await h.call('GET', `/api/v1/services/${world.serviceId}/schema/versions`, {
      token: world.providerToken,
    });
    expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    const missing = await h.call('GET', `/api/v1/services/${world.serviceId}/schema?version=9`, {
      token: world.providerToken,
    });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('schema_not_found');
  });
});

describe('checking messages', () => {
  it('enforce: refuses a violating message with 422 and its pointers; nothing is stored or delivered', async () => {
    await saved({ schema: deploySchema, enforcement: 'enforce' });
    const result = await run({ version: 'one', environment: 'dev', notes: [1] });
    expect(result.message?.status).toBe(422);
    expect(result.message?.body).toMatchObject({
      code: 'payload_schema_violation',
      service: 'acme-deploys',
      schemaVersion: 1,
      errorCount: 3,
      errors: [
        { pointer: '/version', message: 'must match pattern "^\\d+\\.\\d+\\.\\d+$"' },
        { pointer: '/environment', message: 'must be one of "staging", "production"' },
        { pointer: '/notes/0', message: 'must be string' },
      ],
    });
    expect(await h.zekt.store.db.selectFrom('messages').select('message_id').execute()).toEqual([]);
    // The run completed without a message, which the enforced schema requires: blocked and charged.
    const event = await eventOf(result.run.id);
    expect(event.route_status).toBe('blocked');
    expect(event.deliveries_created).toBe(0);
    expect(dispatchesToGlobex()).toEqual([]);
    expect((await usage(world.providerToken)).eventsBlocked).toBe(1);
    const violations = await h.call('GET', '/api/v1/schema-violations', { token: world.providerToken });
    expect(violations.body.violations).toEqual([
      expect.objectContaining({
        service: { id: world.serviceId, slug: 'acme-deploys' },
        kind: 'missing_message',
        outcome: 'blocked',
        enforcement: 'enforce',
        repository: 'acme/api',
        runId: result.run.id,
        errors: [{ pointer: '', message: expect.stringContaining('the run sent no message') }],
      }),
    ]);
    // The workflow's blocked count is of runs blocked for not being whitelisted.
    const workflows = await h.call('GET', '/api/v1/repositories/acme/api/workflows', {
      token: world.providerToken,
    });
    expect(workflows.body.workflows[0].blockedCount).toBe(0);
  });

  it('enforce: delivers a conforming message with client_payload.zekt.schemaVersion', async () => {
    await saved({ schema: deploySchema, enforcement: 'enforce' });
    const result = await run(good);
    expect(result.message?.status).toBe(201);
    expect(bodyOf(result).schemaViolations).toBeUndefined();
    const dispatch = await eventually(() => dispatchesToGlobex()[0]);
    const zekt = (dispatch.clientPayload as { zekt: Record<string, unknown> }).zekt;
    expect(zekt.payload).toEqual(good);
    expect(zekt.schemaVersion).toBe(1);
  });

  it('warn: accepts a violating message, records and counts the violation, delivers it', async () => {
    await saved({ schema: deploySchema, enforcement: 'warn' });
    const result = await run({ version: '1.2.3' });
    expect(result.message?.status).toBe(201);
    expect(bodyOf(result).schemaViolations).toEqual([
      {
        service: 'acme-deploys',
        schemaVersion: 1,
        errors: [{ pointer: '/environment', message: 'is required' }],
        errorCount: 1,
      },
    ]);
    expect(bodyOf(result).message).toContain('which only warns');
    const dispatch = await eventually(() => dispatchesToGlobex()[0]);
    expect((dispatch.clientPayload as { zekt: Record<string, unknown> }).zekt.schemaVersion).toBe(1);
    const violations = await h.call('GET', '/api/v1/schema-violations', { token: world.providerToken });
    expect(violations.body.violations).toEqual([
      expect.objectContaining({
        kind: 'invalid_message',
        outcome: 'accepted',
        enforcement: 'warn',
        runId: result.run.id,
        runAttempt: 1,
        errors: [{ pointer: '/environment', message: 'is required' }],
        errorCount: 1,
      }),
    ]);
    expect((await usage(world.providerToken)).messageSchemaViolations).toBe(1);
    // The consumer sees no violation of the provider's.
    const theirs = await h.call('GET', '/api/v1/schema-violations', { token: world.consumerToken });
    expect(theirs.body.violations).toEqual([]);
  });

  it('warn: a run without a message is delivered, and the missing message recorded', async () => {
    await saved({ schema: deploySchema, enforcement: 'warn' });
    const result = await run(undefined);
    const dispatch = await eventually(() => dispatchesToGlobex()[0]);
    const zekt = (dispatch.clientPayload as { zekt: Record<string, unknown> }).zekt;
    expect('payload' in zekt).toBe(false);
    expect('schemaVersion' in zekt).toBe(false);
    const violations = await h.call('GET', '/api/v1/schema-violations', { token: world.providerToken });
    expect(violations.body.violations).toEqual([
      expect.objectContaining({ kind: 'missing_message', outcome: 'accepted', runId: result.run.id }),
    ]);
  });

  it('a schema that accepts null makes the message optional; off checks nothing', async () => {
    await saved({ schema: { type: ['object', 'null'], required: ['version'] }, enforcement: 'enforce' });
    await run(undefined);
    await eventually(() => dispatchesToGlobex()[0]);
    await saved({ schema: deploySchema, enforcement: 'off', acceptBreaking: true });
    const result = await run({ anything: true });
    expect(result.message?.status).toBe(201);
    await eventually(() => (dispatchesToGlobex().length === 2 ? true : undefined));
    const second = dispatchesToGlobex()[1]!;
    expect((second.clientPayload as { zekt: Record<string, unknown> }).zekt.schemaVersion).toBeUndefined();
    const violations = await h.call('GET', '/api/v1/schema-violations', { token: world.providerToken });
    expect(violations.body.violations).toEqual([]);
  });

  it('checks the message against every service of the workflow: an enforced one refuses for all', async () => {
    await saved({ schema: deploySchema, enforcement: 'warn' });
    const other = await h.call('POST', '/api/v1/services', {
      token: world.providerToken,
      body: { repository: 'acme/api', workflow: 'deploy.yml', slug: 'acme-deploys-strict', published: true },
    });
    await putSchema(
      { schema: { type: 'object', required: ['commit'] }, enforcement: 'enforce' },
      { serviceId: other.body.id },
    );
    const refused = await run(good);
    expect(refused.message?.status).toBe(422);
    expect(refused.message?.body).toMatchObject({
      service: 'acme-deploys-strict',
      errors: [{ pointer: '/commit', message: 'is required' }],
    });
    const accepted = await run({ ...good, commit: 'abc' });
    expect(accepted.message?.status).toBe(201);
    // The refused run completed without a message (recorded: acme-deploys only warns); this one has it.
    const dispatch = await eventually(() =>
      dispatchesToGlobex().find((d) => 'payload' in (d.clientPayload as { zekt: object }).zekt),
    );
    // globex subscribes to acme-deploys: its delivery carries that service's version.
    expect((dispatch.clientPayload as { zekt: Record<string, unknown> }).zekt.schemaVersion).toBe(1);
  });

  it('a catastrophic-backtracking pattern is matched in linear time; an exponential schema is stopped at its bound', async () => {
    await saved({
      schema: { type: 'object', properties: { name: { type: 'string', pattern: '^(a+)+$' } } },
      enforcement: 'enforce',
    });
    const evil = await run({ name: `${'a'.repeat(50_000)}!` });
    expect(evil.message?.status).toBe(422);
    expect(evil.message?.body).toMatchObject({
      code: 'payload_schema_violation',
      errors: [{ pointer: '/name', message: 'must match pattern "^(a+)+$"' }],
    });

    // anyOf branches that recurse through $ref: 2^depth checks. Saved (it compiles), stopped when used.
    const exponential = {
      $defs: {
        node: {
          anyOf: [
            { type: 'array', items: { $ref: '#/$defs/node' } },
            { type: 'array', items: { $ref: '#/$defs/node' } },
          ],
        },
      },
      type: 'object',
      properties: { tree: { $ref: '#/$defs/node' } },
    };
    await saved({ schema: exponential, enforcement: 'enforce', acceptBreaking: true });
    let tree: unknown = 1;
    for (let i = 0; i < 30; i++) tree = [tree];
    const stalled = run({ tree });
    // The server answers other requests while the check runs.
    const meanwhile = await h.call('GET', '/api/v1/me', { token: world.providerToken });
    expect(meanwhile.status).toBe(200);
    const result = await stalled;
    expect(result.message?.status).toBe(422);
    expect(result.message?.body).toMatchObject({
      code: 'schema_validation_timeout',
      errors: [{ pointer: '', message: expect.stringContaining('ZEKT_SCHEMA_VALIDATION_TIMEOUT_MS') }],
    });
    const metrics = await h.zekt.metrics.scrape();
    expect(metrics.body).toMatch(/zekt_message_schema_checks_total\{result="stopped"\} 1/);
    // A later message is checked by a fresh thread.
    expect((await run({ tree: [[]] })).message?.status).toBe(201);
  });
});
