import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../src/cli/cli-error.js';
import { checkMessageFile } from '../src/cli/schema-check.js';
import { setUpWorld, type World } from './support/demo-world.js';
import { type Harness, startHarness } from './support/harness.js';

/** `zekt schema check`: a message file against a service's schema (over the API) or a local one. */
let h: Harness;
let world: World;
const dir = mkdtempSync(join(tmpdir(), 'zekt-schema-check-'));
const file = (name: string, value: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
};
const schema = {
  type: 'object',
  required: ['version'],
  properties: { version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$' } },
};

beforeAll(async () => {
  h = await startHarness({ transport: 'inject' });
  world = await setUpWorld(h);
  const saved = await h.call('PUT', `/api/v1/services/${world.serviceId}/schema`, {
    token: world.providerToken,
    body: { schema, enforcement: 'enforce' },
  });
  expect(saved.status).toBe(200);
});
afterAll(async () => {
  await h.close();
});

async function check(options: { service?: string; schemaFile?: string; message: string; token?: string }) {
  let output = '';
  const code = await checkMessageFile({
    service: options.service ?? null,
    schemaFile: options.schemaFile ?? null,
    version: undefined,
    messageFile: options.message,
    api: { url: h.url, token: options.token ?? world.providerToken },
    write: (text) => {
      output += text;
    },
  });
  return { code, output };
}

describe('zekt schema check', () => {
  it('checks against a service by slug over the API: 0 when it matches, 1 with the pointers when not', async () => {
    expect(
      await check({ service: 'acme-deploys', message: file('good.json', { version: '1.2.3' }) }),
    ).toEqual({
      code: 0,
      output: expect.stringContaining('matches acme-deploys (schema version 1)'),
    });
    const bad = await check({ service: world.serviceId, message: file('bad.json', { version: 'one' }) });
    expect(bad.code).toBe(1);
    expect(bad.output).toContain('/version: must match pattern');
    // A consumer reads it from the Directory.
    const consumer = await check({
      service: 'acme-deploys',
      message: file('good2.json', { version: '2.0.0' }),
      token: world.consumerToken,
    });
    expect(consumer.code).toBe(0);
  });

  it('checks against a local schema file offline, and refuses a schema Zekt would refuse', async () => {
    const local = await check({ schemaFile: file('schema.json', schema), message: file('m.json', {}) });
    expect(local).toEqual({ code: 1, output: expect.stringContaining('/version: is required') });
    await expect(
      check({
        schemaFile: file('remote.json', { $ref: 'https://example.com/s.json' }),
        message: file('m2.json', {}),
      }),
    ).rejects.toThrow(CliError);
    await expect(check({ service: 'no-such-service', message: file('m3.json', {}) })).rejects.toThrow(
      'no service no-such-service',
    );
  });
});
