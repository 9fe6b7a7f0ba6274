import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../src/test-support/harness.js';

/**
 * The API's documentation stays what the server does: the committed OpenAPI document is the one
 * served, and every problem code the server can answer is explained in docs/api.md.
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
  it('is the document the server serves (refresh: vitest run -u apps/server/test/api-docs.test.ts)', async () => {
    const served = await h.call('GET', '/api/openapi.json');
    expect(served.status).toBe(200);
    await expect(`${JSON.stringify(served.body, null, 2)}\n`).toMatchFileSnapshot(
      join(root, 'docs/openapi.json'),
    );
  });
});

describe('docs/api.md', () => {
  it('explains every problem code the server answers with', () => {
    const thrown = new Set<string>();
    for (const file of sourceFiles(join(root, 'apps/server/src'))) {
      for (const match of readFileSync(file, 'utf8').matchAll(/HttpError\(\s*\d{3},\s*'([a-z_]+)'/g)) {
        thrown.add(match[1] as string);
      }
    }
    expect(thrown.size).toBeGreaterThan(30);
    const catalogue = readFileSync(join(root, 'docs/api.md'), 'utf8')
      .split('\n')
      .filter((line) => /^\| \d{3} \|/.test(line))
      .join('\n');
    expect([...thrown].filter((code) => !catalogue.includes(`\`${code}\``)).sort()).toEqual([]);
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}
