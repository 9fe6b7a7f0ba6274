import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createGitHubSimulator } from 'zekt-github-sim';
import { type Environment, loadConfig } from '../config.js';
import { createZekt } from '../zekt.js';
import { seedDemo } from './demo-seed.js';
import { environmentForSimulator } from './simulator-environment.js';

/** Where `zekt dev` keeps its store and the demo's coordinates (wiped at every start). */
export function devDataDir(env: Environment): string {
  return resolve(env.ZEKT_DATA_DIR?.trim() || '.zekt', 'dev');
}

export function demoStatePath(env: Environment): string {
  return join(devDataDir(env), 'demo.json');
}

/**
 * `zekt dev`: the GitHub simulator, the service configured against it, and a seeded demo — one
 * command for a newcomer. The simulator keeps its state in memory, so the store starts empty too.
 * The simulator runs in GitHub Enterprise mode (hooks may target loopback URLs): on github.com a
 * hook URL must be reachable over the public Internet.
 */
export async function runDev(input: {
  env: Environment;
  port: number;
  simPort: number;
  untilStopped: () => Promise<void>;
}): Promise<void> {
  const dataDir = devDataDir(input.env);
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });

  const sim = await createGitHubSimulator({
    host: '127.0.0.1',
    port: input.simPort,
    allowPrivateHookUrls: true,
  });
  const config = loadConfig(
    environmentForSimulator(sim, { port: input.port, dataDir, logLevel: input.env.LOG_LEVEL ?? 'warn' }),
  );
  const zekt = await createZekt({ config });
  const url = await zekt.start();
  if (!url) throw new Error('zekt dev: the server did not start listening');
  const zektUrl = `http://127.0.0.1:${input.port}`;
  sim.setAppWebhookUrl(`${zektUrl}/webhooks/github`);
  const demo = await seedDemo({ zektUrl, sim, store: zekt.store });
  writeFileSync(demoStatePath(input.env), `${JSON.stringify(demo, null, 2)}\n`);

  process.stdout.write(
    [
      '',
      'Zekt is running with a GitHub simulator and a demo.',
      '',
      `  Zekt            ${zektUrl}   (API: ${zektUrl}/api/openapi.json)`,
      `  Console         ${zektUrl}/   (Log in with GitHub: the simulator lets you pick alice or bob)`,
      `  GitHub sim      ${sim.url}   (REST: ${sim.apiUrl})`,
      '',
      `  Provider        ${demo.provider.account} (user ${demo.provider.user}): ${demo.provider.repository}, workflow ${demo.provider.workflow} whitelisted,`,
      `                  service "${demo.eventType}" published`,
      `  Consumer        ${demo.consumer.account} (user ${demo.consumer.user}): ${demo.consumer.repository}, subscription approved,`,
      '                  durable delivery on; its workflow confirms and completes each delivery',
      '',
      `  API token (${demo.provider.user}):  ${demo.tokens.provider}`,
      `  API token (${demo.consumer.user}):    ${demo.tokens.consumer}`,
      '',
      'In another terminal, run a provider workflow and watch the dispatch arrive:',
      '',
      `  npm run trigger -- '{"version":"1.2.3"}'`,
      '',
      'Press Ctrl+C to stop.',
      '',
    ].join('\n'),
  );
  await input.untilStopped();
  await zekt.stop();
  await sim.close();
}
