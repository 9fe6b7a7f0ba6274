import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProblemCode, PROBLEMS, problemTable } from '../src/http/problem-codes.js';
import { type Harness, startHarness } from './support/harness.js';

/**
 * The API's documentation stays what the server does: the committed OpenAPI document is the one
 * served, every route declares what it answers, and docs/api.md carries the table of problems.
 */
const root = resolve(import.meta.dirname, '../../..');
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('docs/openapi.json', () => {
  it('is the document the server serves (refresh: vitest run apps/server/test/api-docs.test.ts -u)', async () => {
    const served = await h.call('GET', '/api/openapi.json');
    expect(served.status).toBe(200);
    await expect(`${JSON.stringify(served.body, null, 2)}\n`).toMatchFileSnapshot(
      join(root, 'docs/openapi.json'),
    );
  });
});

describe('the generated API types (@zekt/client)', () => {
  it('are those of docs/openapi.json (refresh: npm run generate -w @zekt/client)', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'zekt-schema-')), 'schema.d.ts');
    const cli = join(root, 'node_modules/openapi-typescript/bin/cli.js');
    execFileSync(process.execPath, [cli, join(root, 'docs/openapi.json'), '-o', out], { stdio: 'ignore' });
    const committed = readFileSync(join(root, 'packages/client/src/schema.d.ts'), 'utf8');
    expect(committed === readFileSync(out, 'utf8')).toBe(true);
  });
});

describe('docs/api.md', () => {
  it('holds the table of problems the server is built from (problem-codes.ts)', () => {
    const page = readFileSync(join(root, 'docs/api.md'), 'utf8');
    expect(page).toContain(problemTable());
  });
});

describe('response schemas', () => {
  it('every route of the API documents its success and the problems it answers with, all from the table', async () => {
    const { body } = await h.call('GET', '/api/openapi.json');
    const missing: string[] = [];
    for (const [path, methods] of Object.entries(body.paths as Record<string, Record<string, Operation>>)) {
      // The login's browser redirects (/auth/*) are pages, not API.
      if (!/^\/(api|webhooks)\//.test(path)) continue;
      for (const [method, operation] of Object.entries(methods)) {
        const statuses = Object.keys(operation.responses ?? {}).map(Number);
        const where = `${method.toUpperCase()} ${path}`;
        if (!statuses.some((s) => s >= 200 && s < 300)) missing.push(`${where}: no success response`);
        if (!statuses.includes(400) || !statuses.includes(503))
          missing.push(`${where}: no problem responses`);
        if (/^\/api\/(v1|replay|connections)\//.test(path) && !statuses.includes(401))
          missing.push(`${where}: no 401`);
        for (const status of statuses.filter((s) => s >= 400)) {
          const schema = operation.responses[String(status)]?.content?.['application/json']?.schema;
          const codes: string[] = schema?.properties?.code?.enum ?? [];
          if (codes.length === 0) missing.push(`${where}: ${status} names no problem code`);
          for (const code of codes) {
            if (!isProblemCode(code) || PROBLEMS[code].status !== status)
              missing.push(`${where}: ${status} ${code} is not in the table with that status`);
          }
        }
      }
    }
    expect(missing).toEqual([]);
  });
});

interface Operation {
  // biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document, read field by field.
  responses: Record<string, any>;
}
