import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { environmentForSimulator } from '../../src/cli/simulator-environment.js';
import { APP_SETTINGS, freePort } from './harness.js';
import { json, type ProcessGroup, type SimProcessInfo } from './processes.js';
import { copyMigratedSqlite, createMigratedTestDatabase, TEST_STORE } from './test-database.js';

/**
 * What every process-level test starts from: a simulator process whose App webhook points at the
 * address Zekt will listen on, and the environment `zekt serve` needs there — on a data directory
 * of its own and, when the tests run on PostgreSQL, a database of its own. Zekt itself is not
 * started: tests start it (and kill it) as their scenario needs.
 */
export interface ProcessStack {
  sim: SimProcessInfo;
  zektUrl: string;
  zektEnv: Record<string, string>;
  /** Stops every process of the group, drops the database, removes the data directory. */
  close(): Promise<void>;
}

export async function prepareProcessStack(
  processes: ProcessGroup,
  options: {
    name: string;
    env?: Record<string, string>;
    /** Without the App's settings: Zekt starts in setup mode and its App is registered through setup. */
    withoutApp?: boolean;
  },
): Promise<ProcessStack> {
  const dataDir = mkdtempSync(join(tmpdir(), `zekt-${options.name}-`));
  const database = TEST_STORE === 'postgres' ? await createMigratedTestDatabase() : null;
  // The process finds its store migrated, as it finds a PostgreSQL database copied from the template.
  if (!database) await copyMigratedSqlite(join(dataDir, 'zekt.db'));
  const close = async () => {
    await processes.stopAll();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const sim = await processes.startSimulator();
    const port = await freePort();
    const zektUrl = `http://127.0.0.1:${port}`;
    const zektEnv: Record<string, string> = {
      ...(environmentForSimulator(sim, {
        port,
        dataDir,
        nodeEnv: 'test',
        ...(database ? { databaseUrl: database.url } : {}),
      }) as Record<string, string>),
      // Tests poll the API as fast as they can; the per-token limit has tests of its own.
      ZEKT_API_CALL_LIMIT: '1000000',
      ...options.env,
    };
    if (options.withoutApp) {
      for (const name of APP_SETTINGS) delete zektEnv[name];
    }
    const hook = await json('PUT', `${sim.url}/_sim/app/webhook`, { url: `${zektUrl}/webhooks/github` });
    if (hook.status !== 200) throw new Error(`the simulator refused the App webhook URL: ${hook.status}`);
    return { sim, zektUrl, zektEnv, close };
  } catch (error) {
    await close();
    throw error;
  }
}
