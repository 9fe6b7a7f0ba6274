import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, freePort } from '../src/test-support/harness.js';
import { serverCli } from '../src/test-support/processes.js';

/**
 * The README's quick start, as a newcomer runs it: `zekt dev` (what `npm start` runs after the build),
 * then `zekt demo-trigger` (what `npm run trigger` runs) in another terminal.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'zekt-dev-'));
let dev: ChildProcess | undefined;
afterAll(async () => {
  if (dev && dev.exitCode === null) {
    const exited = new Promise((done) => dev!.once('exit', done));
    dev.kill('SIGINT');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe('zekt dev and the demo trigger', () => {
  it('brings up the demo and shows the dispatch arriving with the message', async () => {
    const [port, simPort] = [await freePort(), await freePort()];
    const env = { ...process.env, ZEKT_DATA_DIR: dataDir };
    dev = spawn(process.execPath, [serverCli, 'dev', '--port', String(port), '--sim-port', String(simPort)], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    dev.stdout!.on('data', (chunk) => {
      output += chunk;
    });
    await eventually(() => (output.includes('Press Ctrl+C') ? true : undefined), 30_000);
    expect(output).toContain(`http://127.0.0.1:${port}`);
    expect(output).toContain('npm run trigger -- \'{"version":"1.2.3"}\'');

    const trigger = spawnSync(process.execPath, [serverCli, 'demo-trigger', '{"version":"1.2.3"}'], {
      env,
      encoding: 'utf8',
    });
    expect(trigger.status, trigger.stderr).toBe(0);
    expect(trigger.stdout).toContain('repository_dispatch received by globex/deployer');
    expect(trigger.stdout).toContain('client_payload.zekt.payload equals the message.');
    expect(trigger.stdout).toMatch(/delivery record: Completed \(dispatched /);

    const exited = new Promise<number | null>((done) => dev!.once('exit', done));
    dev.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});
