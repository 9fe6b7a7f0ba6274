import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { INPUT_NAMES, MODES } from '../src/inputs.js';
import { actionDir, bundlePath } from './support/run-action.js';

const run = promisify(execFile);

interface ActionManifest {
  name: string;
  inputs: Record<string, { description: string; required?: boolean; default?: string }>;
  outputs: Record<string, { description: string }>;
  runs: { using: string; main: string };
}

function manifest(dir: string): ActionManifest {
  return parse(readFileSync(join(actionDir, dir, 'action.yml'), 'utf8')) as ActionManifest;
}

describe('dist/index.js', () => {
  it('is the bundle of the current sources (run `npm run build -w packages/action` and commit dist/)', async () => {
    const packageJson = JSON.parse(readFileSync(join(actionDir, 'package.json'), 'utf8'));
    expect(packageJson.scripts.build).toBe('node scripts/bundle.mjs');
    const outfile = join(mkdtempSync(join(tmpdir(), 'zekt-action-bundle-')), 'index.js');
    // From another working directory: the output must not depend on where the build runs.
    await run(process.execPath, [join(actionDir, 'scripts/bundle.mjs'), outfile], { cwd: tmpdir() });
    const fresh = readFileSync(outfile);
    const committed = readFileSync(bundlePath);
    expect(committed.equals(fresh), 'packages/action/dist/index.js is stale: run npm run build').toBe(true);
  });

  it('is loaded as an ES module: packages/action/package.json says so', () => {
    expect(JSON.parse(readFileSync(join(actionDir, 'package.json'), 'utf8')).type).toBe('module');
  });
});

describe('action.yml', () => {
  const main = manifest('.');

  it('runs the bundle on node24', () => {
    expect(main.runs).toEqual({ using: 'node24', main: 'dist/index.js' });
  });

  it('declares every input the code reads, and nothing else', () => {
    expect(Object.keys(main.inputs).sort()).toEqual([...INPUT_NAMES].sort());
  });

  it('has the documented defaults and required inputs', () => {
    expect(main.inputs.mode?.default).toBe('message');
    expect(main.inputs.audience?.default).toBe('api://zekt');
    expect(main.inputs.payload?.default).toBe('{}');
    expect(main.inputs['zekt-api-url']).toMatchObject({ required: true });
    expect(main.inputs['zekt-api-url']).not.toHaveProperty('default');
    // Required by the message mode only: the code checks it, so consumer steps need not give it.
    expect(main.inputs['event-type']?.required).toBe(false);
    expect(Object.keys(main.outputs)).toEqual(
      expect.arrayContaining(['event-id', 'status', 'consumers-notified', 'payload', 'payload-path']),
    );
  });

  for (const mode of MODES.filter((m) => m !== 'message')) {
    it(`${mode}/action.yml runs the same bundle with the mode fixed`, () => {
      const sub = manifest(mode);
      expect(sub.runs).toEqual({ using: 'node24', main: '../dist/index.js' });
      expect(existsSync(resolve(actionDir, mode, sub.runs.main))).toBe(true);
      expect(sub.inputs.mode?.default).toBe(mode);
      for (const [name, input] of Object.entries(sub.inputs)) {
        expect(INPUT_NAMES, `${mode}/action.yml input ${name}`).toContain(name);
        if (name !== 'mode') expect(input.default, name).toEqual(main.inputs[name]?.default);
        expect(input.required ?? false).toBe(main.inputs[name]?.required ?? false);
      }
      expect(Object.keys(sub.outputs)).toContain('status');
    });
  }
});
