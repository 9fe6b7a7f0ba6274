import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProblemCode, PROBLEMS } from '../../src/http/problem-codes.js';
import { makeDurable, setUpWorld, type World } from '../support/demo-world.js';
import { eventually, type Harness, startHarness } from '../support/harness.js';
import { fillPath, type JsonSchema, listOperations, type Operation } from '../support/openapi-operations.js';
import { changedTables, snapshotStore } from '../support/store-snapshot.js';

/**
 * Property-based fuzzing of every route of the OpenAPI document, against the running
 * server: malformed requests — wrong types, missing and unknown fields, huge and deeply nested
 * values, bad percent-encodings, wrong content types, wrong credentials — never get a 5xx, every
 * error is problem+json with a code of the table at its status, and a refused request writes no row.
 *
 * `npm test` runs a fixed number of requests with a fixed seed; `npm run fuzz` runs many more with a
 * new seed it prints (ZEKT_FUZZ_RUNS, ZEKT_FUZZ_SEED reproduce a run).
 */
const RUNS = Number(process.env.ZEKT_FUZZ_RUNS ?? 400);
// A fixed seed in `npm test`; a new one for each long run, printed so a failure can be replayed.
const SEED = Number(
  process.env.ZEKT_FUZZ_SEED ?? (process.env.ZEKT_FUZZ_RUNS ? Date.now() % 2 ** 31 : 20_261_110),
);
/** Rate-limit counters count refused requests on purpose; everything else must stay as it was. */
const BOOKKEEPING = ['rate_limit_counters'];

let h: Harness;
let world: World;
let operations: Operation[];
let fixtures: Record<string, string[]>;
let credentials: string[];
let deliveryToken: string;

beforeAll(async () => {
  // Limits high enough that the fuzzer's refused requests do not lock it out of the routes it
  // explores; no background workers, so every change of the store is the request's own doing.
  h = await startHarness({
    workers: false,
    env: {
      ZEKT_AUTH_FAILURE_LIMIT: '1000000',
      ZEKT_API_CALL_LIMIT: '1000000',
      ZEKT_INSTALLATION_DISPATCH_RATE: '0',
    },
  });
  world = await setUpWorld(h);
  await makeDurable(h, world);
  await h.sim.runWorkflow({
    repository: 'acme/api',
    workflow: 'deploy.yml',
    message: { zektUrl: h.url, eventType: 'deployed', payload: { version: '1' } },
  });
  await h.zekt.router.routeDue();
  await h.zekt.dispatcher.dispatchDue();
  const dispatch = await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[0]);
  const zekt = (
    dispatch.clientPayload as { zekt: { deliveryId: string; correlationId: string; token: string } }
  ).zekt;
  deliveryToken = zekt.token;
  operations = listOperations((await h.call('GET', '/api/openapi.json')).body);
  fixtures = {
    account: ['acme', 'globex'],
    owner: ['acme', 'globex'],
    repo: ['api', 'app', 'web'],
    file: ['deploy.yml', 'other.yml'],
    id: [world.serviceId, world.subscriptionId],
    deliveryId: [zekt.deliveryId],
    correlationId: [zekt.correlationId],
    serviceId: [world.serviceId],
    repository: ['acme/api', 'globex/app'],
    deliversTo: ['globex/app', 'acme/web'],
    workflow: ['deploy.yml'],
  };
  credentials = [
    world.providerToken,
    world.consumerToken,
    deliveryToken,
    await h.sim.mintOidcToken({ repository: 'acme/api', workflow: 'deploy.yml' }),
    await h.sim.mintOidcToken({ repository: 'globex/app', workflow: 'on-deploy.yml' }),
  ];
}, 60_000);

afterAll(async () => {
  await h.close();
});

/** Strings a careless or hostile client sends. */
const nastyString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\r\n',
    '../..',
    '%',
    '%ff',
    '%E0%A4%A',
    '☃',
    '𝕏',
    '"',
    "'",
    '\\',
    '{}',
    '[]',
  ),
  fc.integer({ min: 101, max: 5000 }).map((n) => 'x'.repeat(n)),
);

/** A path segment: a real id, or something that is not one, encoded or raw. */
function segment(name: string) {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...(fixtures[name] ?? ['x'])) },
    { weight: 2, arbitrary: nastyString.map(encodeURIComponent) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '%ff',
        '%',
        '%E0%A4%A',
        '%00',
        '..',
        '%2F',
        'x'.repeat(101),
        'x'.repeat(3000),
      ),
    },
  );
}

/** A value for a JSON schema: mostly one that fits, sometimes one of another type. */
function valueFor(schema: JsonSchema | undefined, name: string, depth = 0): fc.Arbitrary<unknown> {
  const wrong = fc.oneof(
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    nastyString,
    fc.array(fc.integer(), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
  );
  return fc.oneof({ weight: 4, arbitrary: fitting(schema, name, depth) }, { weight: 1, arbitrary: wrong });
}

function fitting(schema: JsonSchema | undefined, name: string, depth: number): fc.Arbitrary<unknown> {
  if (!schema || depth > 3) return fc.jsonValue({ maxDepth: 2 });
  if (schema.anyOf?.length) return fc.oneof(...schema.anyOf.map((s) => fitting(s, name, depth + 1)));
  if (schema.enum?.length) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number':
      return fc.integer();
    case 'array':
      return fc.array(fitting(schema.items, name, depth + 1), { maxLength: 4 });
    case 'object':
      return bodyObject(schema, depth + 1);
    case 'string':
      return fixtures[name] ? fc.oneof(fc.constantFrom(...fixtures[name]!), nastyString) : nastyString;
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** An object for a schema: its properties (some left out), sometimes an unknown one. */
function bodyObject(schema: JsonSchema, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(schema.properties ?? {});
  return fc
    .tuple(
      fc.tuple(...entries.map(([key, s]) => fc.option(valueFor(s, key, depth), { nil: undefined, freq: 4 }))),
      fc.option(fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 1 })), {
        freq: 5,
      }),
    )
    .map(([values, extra]) => {
      const body: Record<string, unknown> = {};
      entries.forEach(([key], i) => {
        if (values[i] !== undefined) body[key] = values[i];
      });
      if (extra) body[extra[0]] = extra[1];
      return body;
    });
}

const deep = fc
  .integer({ min: 65, max: 4000 })
  .chain((n) => fc.constantFrom(`${'['.repeat(n)}${']'.repeat(n)}`, `${'{"a":'.repeat(n)}0${'}'.repeat(n)}`));

/** The bytes of a body, and the content type it is sent with. */
function requestBody(operation: Operation) {
  const json = operation.body
    ? bodyObject(operation.body).map((b) => JSON.stringify(b))
    : fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v));
  const text = fc.oneof(
    { weight: 6, arbitrary: json },
    { weight: 1, arbitrary: deep },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 100_000, max: 2_500_000 })
        .map((n) => JSON.stringify({ x: 'a'.repeat(n) })),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 50 }) },
    { weight: 1, arbitrary: fc.constant('') },
    {
      weight: 1,
      arbitrary: fc.constantFrom('{', '{"a":', 'null', '[]', '"x"', '{"__proto__":{"x":1}}', '\u00ff\u00fe'),
    },
  );
  const type = fc.constantFrom(
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    undefined,
  );
  return fc.option(fc.tuple(text, type), { freq: 8 });
}

function query(operation: Operation) {
  const known = operation.queryParams.map((p) => p.name);
  const names = fc.constantFrom(...known, 'junk', 'limit', 'cursor', '__proto__');
  return fc
    .array(
      fc.tuple(
        names,
        fc.oneof(nastyString, fc.integer().map(String), fc.constantFrom('1', '100', '101', '0', '-1')),
      ),
      {
        maxLength: 4,
      },
    )
    .map((pairs) =>
      pairs.length === 0
        ? ''
        : `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${Math.random() < 0.9 ? encodeURIComponent(v) : v}`).join('&')}`,
    );
}

function webhookHeaders(body: string | undefined) {
  return fc
    .record({
      event: fc.constantFrom(
        'ping',
        'installation',
        'installation_repositories',
        'workflow_run',
        'push',
        '',
        'x'.repeat(300),
      ),
      signature: fc.constantFrom('app', 'junk', 'none'),
      delivery: fc.oneof(fc.uuid(), nastyString),
    })
    .map(({ event, signature, delivery }) => ({
      'x-github-event': event,
      'x-github-delivery': encodeURIComponent(delivery).slice(0, 200),
      ...(signature === 'none'
        ? {}
        : {
            'x-hub-signature-256':
              signature === 'app'
                ? `sha256=${createHmac('sha256', h.sim.app.webhookSecret)
                    .update(body ?? '')
                    .digest('hex')}`
                : 'sha256=00',
          }),
    }));
}

interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

function requestFor(operation: Operation): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      params: fc.tuple(...operation.pathParams.map((name) => segment(name))),
      query: query(operation),
      body: requestBody(operation),
      credential: fc.option(
        fc.oneof(
          fc.constantFrom(...credentials),
          nastyString.map((s) => `zkt_${encodeURIComponent(s)}`),
        ),
        { freq: 6 },
      ),
      scheme: fc.constantFrom('Bearer', 'Bearer', 'Bearer', 'Basic', 'bearer'),
      idempotencyKey: fc.option(nastyString, { freq: 3 }),
      method: fc.constantFrom(operation.method, operation.method, operation.method, 'DELETE', 'PUT'),
    })
    .chain((r) => {
      const values = Object.fromEntries(operation.pathParams.map((name, i) => [name, r.params[i]!]));
      const [text, type] = r.body ?? [undefined, undefined];
      const headers: Record<string, string> = {
        ...(type ? { 'content-type': type } : {}),
        ...(r.credential ? { authorization: `${r.scheme} ${r.credential}` } : {}),
        ...(r.idempotencyKey !== null
          ? { 'idempotency-key': encodeURIComponent(r.idempotencyKey).slice(0, 300) }
          : {}),
      };
      const base: FuzzRequest = {
        method: r.method,
        url: `${h.url}${fillPath(operation.path, values)}${r.query}`,
        headers,
        body: r.method === 'GET' ? undefined : (text ?? undefined),
      };
      if (operation.path !== '/webhooks/github') return fc.constant(base);
      return webhookHeaders(base.body).map((extra) => ({ ...base, headers: { ...base.headers, ...extra } }));
    });
}

describe('fuzzing every route of the OpenAPI document', () => {
  it(
    'never answers 5xx, answers every error as a problem of the table, and writes nothing when it refuses',
    async () => {
      const apiOperations = operations.filter((op) => /^\/(api|webhooks|auth)\//.test(op.path));
      expect(apiOperations.length).toBeGreaterThan(30);
      const request = fc.constantFrom(...apiOperations).chain(requestFor);
      if (process.env.ZEKT_FUZZ_RUNS) console.info(`fuzzing ${RUNS} requests, seed ${SEED}`);
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const before = await snapshotStore(h.zekt.store, BOOKKEEPING);
          const response = await fetch(r.url, {
            method: r.method,
            headers: r.headers,
            ...(r.body === undefined ? {} : { body: r.body }),
            redirect: 'manual',
          });
          const text = await response.text();
          const where = `${r.method} ${r.url.slice(0, 200)} → ${response.status} ${text.slice(0, 300)}`;
          expect(response.status, where).toBeLessThan(500);
          if (response.status < 400) return;
          expect(response.headers.get('content-type'), where).toContain('application/problem+json');
          const problem = JSON.parse(text) as { status: number; code: string; type: string; title: string };
          expect(isProblemCode(problem.code), where).toBe(true);
          expect(problem.status, where).toBe(response.status);
          expect(PROBLEMS[problem.code as keyof typeof PROBLEMS].status, where).toBe(response.status);
          expect(problem.type, where).toBe(`https://zekt.dev/problems/${problem.code}`);
          // A refused request changed nothing (consumer calls refused as already final are counted,
          // as the usage counters promise).
          const changed = changedTables(before, await snapshotStore(h.zekt.store, BOOKKEEPING)).filter(
            (table) => !(problem.code === 'already_final' && table === 'usage_daily_shards'),
          );
          expect(changed, `${where}: a refused request wrote to the store`).toEqual([]);
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: false, interruptAfterTimeLimit: 20 * 60_000 },
      );
    },
    30 * 60_000,
  );
});
