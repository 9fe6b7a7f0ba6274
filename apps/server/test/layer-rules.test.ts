import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `npm run lint` enforces the layer rules of .dependency-cruiser.cjs. Here the same command and
 * configuration run over a small tree laid out like the server's, once with each rule broken and
 * once clean, so a rule that stops matching (a renamed folder, a typo in a path pattern) fails here.
 */
const run = promisify(execFile);
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const depcruise = join(repoRoot, 'node_modules/.bin/depcruise');
const fixtures: string[] = [];
afterAll(() => {
  for (const dir of fixtures) rmSync(dir, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'zekt-layers-'));
  fixtures.push(dir);
  copyFileSync(join(repoRoot, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
  );
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

async function lintLayers(dir: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await run(
      depcruise,
      ['apps', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'],
      {
        cwd: dir,
      },
    );
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

const clean = {
  'apps/server/src/domain/health.ts':
    "import { randomUUID } from 'node:crypto';\nexport const id = randomUUID;\n",
  'apps/server/src/store/deliveries.ts': 'export const claim = () => 1;\n',
  'apps/server/src/store/engine/group-commit.ts': 'export const commit = () => 1;\n',
  'apps/server/src/http/routes.ts':
    "import { id } from '../domain/health.js';\nimport { claim } from '../store/deliveries.js';\nexport const route = [id, claim];\n",
  'apps/server/src/cli/main.ts': "import { route } from '../http/routes.js';\nexport const main = route;\n",
  'apps/server/test/cli.test.ts': "import { main } from '../src/cli/main.js';\nexport const t = main;\n",
};

describe('the layer rules of npm run lint', () => {
  it('pass a tree that keeps them (tests may import anything)', async () => {
    const result = await lintLayers(tree(clean));
    expect(result.output).toContain('no dependency violations found');
    expect(result.code).toBe(0);
  });

  it('fail, naming the rule and the import, when a layer reaches where it must not', async () => {
    const result = await lintLayers(
      tree({
        ...clean,
        'apps/server/src/domain/retry.ts':
          "import { createServer } from 'node:http';\nimport type { Route } from '../http/types.js';\nexport const r = createServer;\nexport type R = Route;\n",
        'apps/server/src/http/types.ts': 'export type Route = string;\n',
        'apps/server/src/http/claim.ts':
          "import { commit } from '../store/engine/group-commit.js';\nimport { main } from '../cli/main.js';\nexport const c = [commit, main];\n",
        'apps/server/src/store/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
        'apps/server/src/store/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
        'apps/console/src/components/table.tsx':
          "import { view } from '../views/usage.js';\nexport const t = view;\n",
        'apps/console/src/views/usage.tsx': 'export const view = 1;\n',
      }),
    );
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('domain-is-pure: apps/server/src/domain/retry.ts → http');
    expect(result.output).toContain(
      'domain-types-stay-in-domain: apps/server/src/domain/retry.ts → apps/server/src/http/types.ts',
    );
    expect(result.output).toContain(
      'http-uses-store-operations: apps/server/src/http/claim.ts → apps/server/src/store/engine/group-commit.ts',
    );
    expect(result.output).toContain(
      'nothing-imports-cli: apps/server/src/http/claim.ts → apps/server/src/cli/main.ts',
    );
    expect(result.output).toMatch(
      /no-cycles: apps\/server\/src\/store\/([ab])\.ts →\s+apps\/server\/src\/store\/[ab]\.ts →\s+apps\/server\/src\/store\/\1\.ts/,
    );
    expect(result.output).toContain(
      'console-components-are-generic: apps/console/src/components/table.tsx → apps/console/src/views/usage.tsx',
    );
  });
});
