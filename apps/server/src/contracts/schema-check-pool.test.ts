import { afterEach, describe, expect, it } from 'vitest';
import { createSchemaCheckPool, type SchemaCheckPool } from './schema-check-pool.js';

/** The checking threads, for real: Ajv 2020 with formats and re2js, time bounds, stopped threads. */
let pool: SchemaCheckPool;
const stopped: string[] = [];

function open(overrides: Partial<Parameters<typeof createSchemaCheckPool>[0]> = {}): SchemaCheckPool {
  pool = createSchemaCheckPool({
    threads: 1,
    validationTimeoutMs: 1_000,
    compileTimeoutMs: 10_000,
    onStopped: (reason) => stopped.push(reason),
    ...overrides,
  });
  return pool;
}

afterEach(async () => {
  stopped.length = 0;
  await pool?.close();
});

const deploy = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['version', 'environment'],
  properties: {
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$' },
    environment: { enum: ['staging', 'production'] },
    url: { type: 'string', format: 'uri' },
  },
  additionalProperties: false,
};

/** anyOf branches that recurse: each level's subtree is checked twice, 2^depth checks in all. */
const exponential = {
  $defs: {
    node: {
      anyOf: [
        { type: 'array', items: { $ref: '#/$defs/node' } },
        { type: 'array', items: { $ref: '#/$defs/node' } },
      ],
    },
  },
  $ref: '#/$defs/node',
};

/** `leaf` wrapped in `depth` arrays. */
function nestedArrays(leaf: unknown, depth: number): unknown {
  let nested = leaf;
  for (let i = 0; i < depth; i++) nested = [nested];
  return nested;
}

describe('compiling a schema', () => {
  it('compiles a valid schema, says whether it requires a message, and checks the example', async () => {
    open();
    expect(await pool.compile(deploy, { version: '1.2.3', environment: 'production' })).toEqual({
      ok: true,
      requiresMessage: true,
      example: { errors: [], errorCount: 0 },
    });
    expect(await pool.compile({ type: ['object', 'null'] })).toEqual({
      ok: true,
      requiresMessage: false,
      example: null,
    });
    const bad = await pool.compile(deploy, { version: 'one', environment: 'dev', extra: 1 });
    expect(bad.ok && bad.example).toEqual({
      errors: [
        { pointer: '/extra', message: 'is not a property the schema allows' },
        { pointer: '/version', message: 'must match pattern "^\\d+\\.\\d+\\.\\d+$"' },
        { pointer: '/environment', message: 'must be one of "staging", "production"' },
      ],
      errorCount: 3,
    });
  });

  it('refuses what is not valid 2020-12, with the pointer of the problem', async () => {
    open();
    expect(await pool.compile({ properties: { a: { type: 'strin' } } })).toEqual({
      ok: false,
      problem: {
        pointer: '/properties/a/type',
        message: expect.stringContaining('not valid JSON Schema draft 2020-12'),
      },
    });
    expect(await pool.compile({ required: 'a' })).toMatchObject({
      ok: false,
      problem: { pointer: '/required' },
    });
  });

  it('refuses a pattern RE2 cannot run, and a $ref to nothing, with their pointers', async () => {
    open();
    expect(await pool.compile({ properties: { a: { pattern: '^(?=x)y$' } } })).toEqual({
      ok: false,
      problem: { pointer: '/properties/a/pattern', message: expect.stringContaining('linear-time engine') },
    });
    expect(await pool.compile({ patternProperties: { '(a)\\1': {} } })).toMatchObject({
      ok: false,
      problem: { pointer: '/patternProperties/(a)\\1' },
    });
    expect(await pool.compile({ items: { $ref: '#/$defs/missing' } })).toEqual({
      ok: false,
      problem: { pointer: '/items/$ref', message: expect.stringContaining('names nothing in this schema') },
    });
  });
});

describe('checking a message', () => {
  const check = (payload: unknown, key = 'svc_a@1', schema: unknown = deploy) =>
    pool.validate({
      key,
      loadSchema: async () => JSON.stringify(schema),
      payloadJson: JSON.stringify(payload),
    });

  it('answers the violations with pointers, and compiles each schema once per thread', async () => {
    open();
    let loads = 0;
    const loadSchema = async () => {
      loads++;
      return JSON.stringify(deploy);
    };
    const payloadJson = JSON.stringify({ version: 2, url: 'not a uri' });
    expect(await pool.validate({ key: 'svc_a@1', loadSchema, payloadJson })).toEqual({
      errors: [
        { pointer: '/environment', message: 'is required' },
        { pointer: '/version', message: 'must be string' },
        { pointer: '/url', message: 'must match format "uri"' },
      ],
      errorCount: 3,
      timedOut: false,
    });
    const valid = JSON.stringify({ version: '1.0.0', environment: 'staging' });
    expect(await pool.validate({ key: 'svc_a@1', loadSchema, payloadJson: valid })).toEqual({
      errors: [],
      errorCount: 0,
      timedOut: false,
    });
    expect(loads).toBe(1);
  });

  it('matches a catastrophic-backtracking pattern in linear time: an answer, not a timeout', async () => {
    open({ validationTimeoutMs: 2_000 });
    const evil = { type: 'object', properties: { name: { type: 'string', pattern: '^(a+)+$' } } };
    // A backtracking engine takes minutes on 40 characters; RE2 answers at once, even on 100,000.
    const outcome = await check({ name: `${'a'.repeat(100_000)}!` }, 'svc_evil@1', evil);
    expect(outcome).toEqual({
      errors: [{ pointer: '/name', message: 'must match pattern "^(a+)+$"' }],
      errorCount: 1,
      timedOut: false,
    });
    expect(stopped).toEqual([]);
  });

  it('stops a check past its bound without holding the event loop, and checks the next one on a new thread', async () => {
    open({ validationTimeoutMs: 300 });
    // 2^28 checks: far past the bound.
    const nested = nestedArrays(1, 28);
    let settled = false;
    const slow = check(nested, 'svc_slow@1', exponential).finally(() => {
      settled = true;
    });
    // The event loop turns while the thread works.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(settled).toBe(false);
    const outcome = await slow;
    expect(outcome.timedOut).toBe(true);
    expect(outcome.errors[0]!.message).toContain('ZEKT_SCHEMA_VALIDATION_TIMEOUT_MS');
    expect(stopped).toEqual(['timeout']);
    expect(await check({ version: '1.0.0', environment: 'staging' })).toMatchObject({
      errorCount: 0,
      timedOut: false,
    });
  });

  it('bounds the CPU time a check uses, not the time it waits for a core on a busy machine', async () => {
    // The thread's CPU counter says it used nothing: a check that takes longer than its bound in
    // wall time only because the machine is busy must not be stopped (it was, with a wall-time
    // bound, under the bench's load: a valid message refused).
    open({ validationTimeoutMs: 50, threadCpuMs: () => 0 });
    const nested = nestedArrays('leaf', 15);
    // Compiled first, so the check alone is timed.
    await check([], 'svc_busy@1', exponential);
    const outcome = await check(nested, 'svc_busy@1', exponential);
    expect(outcome.timedOut).toBe(false);
    expect(outcome.errorCount).toBeGreaterThan(0);
    expect(stopped).toEqual([]);
  });

  it('reports 20 violations of a message that has thousands, and counts them all', async () => {
    open();
    const schema = { type: 'array', items: { type: 'string' } };
    const outcome = await check(
      Array.from({ length: 5_000 }, (_, i) => i),
      'svc_many@1',
      schema,
    );
    expect(outcome.errors).toHaveLength(20);
    expect(outcome.errors[19]).toEqual({ pointer: '/19', message: 'must be string' });
    expect(outcome.errorCount).toBe(5_000);
  });
});
