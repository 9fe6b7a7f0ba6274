import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/free-port.js';
import { type ProcessStack, prepareProcessStack } from './support/process-stack.js';
import { type JsonBody, json, ProcessGroup, serverCli } from './support/processes.js';
import { type RemoteWorld, setUpRemoteWorld } from './support/remote-world.js';
import { TEST_STORE } from './support/test-database.js';

/**
 * `zekt backup <file>`: an online copy of the embedded store taken while `zekt serve` takes
 * webhooks, restored by copying it into a fresh data directory, where a second server starts and
 * finds every run acknowledged before the backup began. On PostgreSQL the command refuses and names
 * pg_dump.
 */
const execFileAsync = promisify(execFile);
const processes = new ProcessGroup();
let stack: ProcessStack;
let world: RemoteWorld;
const scratch = mkdtempSync(join(tmpdir(), 'zekt-backup-'));

/** Runs `zekt backup` to completion: its exit code and what it printed. */
async function backup(args: string[], env: Record<string, string>) {
  return execFileAsync(process.execPath, [serverCli, 'backup', ...args], {
    env: { ...process.env, ...env },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

beforeAll(async () => {
  stack = await prepareProcessStack(processes, { name: 'backup' });
  await processes.startZekt(stack.zektUrl, stack.zektEnv);
  world = await setUpRemoteWorld({ ...stack, processes, workflow: 'deploy.yml' });
}, 90_000);

afterAll(async () => {
  await stack?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A provider run with a message; its completion webhook acknowledged. */
async function providerRun(version: string): Promise<string> {
  const run = await json('POST', `${stack.sim.url}/_sim/repos/acme/api/runs`, {
    workflow: 'deploy.yml',
    message: { zektUrl: stack.zektUrl, eventType: 'released', payload: { version } },
  });
  expect(run.status).toBe(201);
  expect(run.body.webhooks.map((w: JsonBody) => w.status)).toEqual([202]);
  return String(run.body.run.id);
}

// One suite per store: the command copies SQLite only.
if (TEST_STORE === 'sqlite')
  describe('zekt backup on the embedded store', () => {
    it('copies the store while the server takes webhooks; the copy, restored, serves every run acknowledged before', async () => {
      const before = [];
      for (let i = 0; i < 5; i++) before.push(await providerRun(`1.0.${i}`));

      // Load: runs keep arriving while the backup is taken.
      let loading = true;
      let during = 0;
      const load = Promise.all(
        Array.from({ length: 4 }, async (_, worker) => {
          while (loading) {
            await providerRun(`2.${worker}.${during++}`);
          }
        }),
      );
      while (during < 8) await new Promise((resolve) => setTimeout(resolve, 20));
      const file = join(scratch, 'zekt-backup.db');
      const taken = await backup([file], stack.zektEnv);
      const afterBackup = during;
      while (during < afterBackup + 8) await new Promise((resolve) => setTimeout(resolve, 20));
      loading = false;
      await load;
      expect(taken, taken.stderr).toMatchObject({ code: 0 });
      expect(taken.stdout).toMatch(new RegExp(`^backed up the store to ${file} \\(\\d+ pages\\)\\n$`));

      const copy = new BetterSqlite3(file, { readonly: true });
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      copy.close();
      expect(existsSync(`${file}.partial`)).toBe(false);

      // Restore: the backup becomes the store of a fresh data directory.
      const restoredDir = join(scratch, 'restored');
      mkdirSync(restoredDir);
      copyFileSync(file, join(restoredDir, 'zekt.db'));
      const port = await freePort();
      const restoredUrl = `http://127.0.0.1:${port}`;
      await processes.startZekt(restoredUrl, {
        ...stack.zektEnv,
        PORT: String(port),
        ZEKT_BASE_URL: restoredUrl,
        ZEKT_DATA_DIR: restoredDir,
      });
      const restored: JsonBody[] = [];
      let cursor: string | null = null;
      do {
        const page = await json(
          'GET',
          `${restoredUrl}/api/v1/deliveries?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
          undefined,
          // The API token lives in the store: the restored one knows it.
          world.alice,
        );
        expect(page.status).toBe(200);
        restored.push(...page.body.deliveries);
        cursor = page.body.nextCursor;
      } while (cursor);
      const restoredRuns = new Set(restored.map((record) => String(record.correlationId)));
      for (const runId of before) expect(restoredRuns, `run ${runId}`).toContain(runId);
      // Runs acknowledged while the copy was made may or may not be in it; none after it finished.
      expect(restored.length).toBeGreaterThanOrEqual(before.length);
      expect(restored.length).toBeLessThanOrEqual(before.length + afterBackup);
    });

    it('never overwrites a file, never copies the store onto itself, never creates a store', async () => {
      const existing = join(scratch, 'existing.db');
      writeFileSync(existing, 'keep me');
      const overwrite = await backup([existing], stack.zektEnv);
      expect(overwrite.code).toBe(2);
      expect(overwrite.stderr).toContain(`${existing} exists already`);

      const onto = await backup([join(stack.zektEnv.ZEKT_DATA_DIR!, 'zekt.db')], stack.zektEnv);
      expect(onto.code).toBe(2);

      const empty = mkdtempSync(join(scratch, 'empty-'));
      const missing = await backup([join(scratch, 'nothing.db')], { ...stack.zektEnv, ZEKT_DATA_DIR: empty });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('ZEKT_DATA_DIR');
      expect(existsSync(join(empty, 'zekt.db'))).toBe(false);
      expect(existsSync(join(scratch, 'nothing.db'))).toBe(false);

      const usage = await backup([], stack.zektEnv);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('zekt backup <file>');
    });
  });

if (TEST_STORE === 'postgres')
  describe('zekt backup on PostgreSQL', () => {
    it('refuses and names pg_dump', async () => {
      const file = join(scratch, 'pg.db');
      const refused = await backup([file], stack.zektEnv);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('pg_dump');
      expect(refused.stderr).toContain('DATABASE_URL');
      expect(existsSync(file)).toBe(false);
    });
  });
