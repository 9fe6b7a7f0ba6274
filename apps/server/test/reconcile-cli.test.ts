import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { environmentForSimulator } from '../src/cli/simulator-environment.js';
import { setUpWorld } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';

/** `zekt reconcile`, the built command, run by an operator against a running Zekt's store and App. */
const cli = resolve(import.meta.dirname, '../dist/cli/main.js');
const run = promisify(execFile);

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { ZEKT_RECONCILE_INTERVAL_MS: '0' } });
  await setUpWorld(h);
});
afterAll(async () => {
  await h?.close();
});

function zektReconcile(args: string[]) {
  const database = h.config.database;
  const env = environmentForSimulator(h.sim, {
    port: h.config.port,
    dataDir: database.kind === 'sqlite' ? dirname(database.path) : '/nonexistent',
    nodeEnv: 'test',
    ...(database.kind === 'postgres' ? { databaseUrl: database.url } : {}),
  });
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(GITHUB_|ZEKT_|DATABASE_URL|PORT|NODE_ENV)/.test(name)),
  );
  return run(process.execPath, [cli, 'reconcile', ...args], { env: { ...clean, ...env } }).then(
    (result) => ({ code: 0, ...result }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

describe('zekt reconcile', () => {
  it('prints what it found, asked GitHub for and recovered; the dropped webhook is routed', async () => {
    h.sim.dropWebhooks({ event: 'workflow_run', repository: 'acme/api' });
    const { webhooks } = await h.sim.runWorkflow({
      repository: 'acme/api',
      workflow: 'deploy.yml',
      message: { zektUrl: h.url, eventType: 'acme-deployed', payload: { version: '2.0.0' } },
    });
    const guid = webhooks[0]?.guid;
    expect(webhooks[0]?.error).toBe('failed to connect');

    const result = await zektReconcile(['--wait-s', '20']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^the App webhook: \d+ deliveries listed, 0 failed, 0 redelivery requested$/);
    expect(lines[1]).toMatch(
      /^acme\/api provider webhook \d+: \d+ deliveries listed, 1 failed, 1 redelivery requested$/,
    );
    expect(lines).toContain(
      `requested: workflow_run.completed ${guid} (repository:${/webhook (\d+)/.exec(lines[1] ?? '')?.[1]})`,
    );
    expect(lines).toContain(`recovered: workflow_run.completed ${guid}`);
    expect(lines.at(-1)).toBe('1 redeliveries requested, 1 recovered, 0 not arrived yet');
    await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[0]);

    // GitHub refusing is reported, with a non-zero exit, not a crash.
    h.sim.injectFaults({
      method: 'GET',
      path: '/app/hook/deliveries',
      faults: [{ kind: 'status', status: 401 }],
    });
    const refused = await zektReconcile(['--json']);
    expect(refused.code).toBe(1);
    const report = JSON.parse(refused.stdout);
    expect(report.webhooks[0]).toMatchObject({
      webhook: 'the App webhook',
      outcome: 'refused',
      problem: { kind: 'unauthorized' },
    });
    expect(report.requested).toEqual([]);
  });
});
