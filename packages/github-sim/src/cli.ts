#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { CliUsageError, parseCli, type RunCommand, type ServeCommand, USAGE } from './cli-args.js';
import { createGitHubSimulator } from './simulator.js';

async function serve(command: ServeCommand): Promise<void> {
  let privateKeyPem: string | undefined;
  if (command.privateKeyPath !== undefined) {
    try {
      privateKeyPem = readFileSync(command.privateKeyPath, 'utf8');
    } catch (cause) {
      throw new CliUsageError(
        `cannot read --private-key-path ${command.privateKeyPath}: ${(cause as Error).message}`,
      );
    }
  }
  const sim = await createGitHubSimulator({
    host: command.host,
    port: command.port,
    allowPrivateHookUrls: command.allowPrivateHookUrls,
    ...(command.oidcTokenLifetimeSeconds === undefined
      ? {}
      : { oidcTokenLifetimeSeconds: command.oidcTokenLifetimeSeconds }),
    ...(command.ghesVersion === undefined ? {} : { ghesVersion: command.ghesVersion }),
    app: {
      ...(command.appId === undefined ? {} : { id: command.appId }),
      ...(command.appSlug === undefined ? {} : { slug: command.appSlug }),
      ...(privateKeyPem === undefined ? {} : { privateKeyPem }),
      ...(command.webhookUrl === undefined ? {} : { webhookUrl: command.webhookUrl }),
      ...(command.webhookSecret === undefined ? {} : { webhookSecret: command.webhookSecret }),
      ...(command.appEvents === undefined ? {} : { events: command.appEvents }),
      ...(command.callbackUrls === undefined ? {} : { callbackUrls: command.callbackUrls }),
    },
  });
  process.stdout.write(
    `${JSON.stringify({ url: sim.url, apiUrl: sim.apiUrl, oidcIssuer: sim.oidcIssuer, app: sim.app })}\n`,
  );
  const stop = async (signal: string) => {
    process.stderr.write(`zekt-github-sim: ${signal}, closing\n`);
    await sim.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

async function run(command: RunCommand): Promise<void> {
  const url = `${command.simUrl}/_sim/repos/${command.repository}/runs`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(command.body),
    });
  } catch (cause) {
    throw new Error(
      `cannot reach the simulator at ${command.simUrl} (is zekt-github-sim serve running?): ${(cause as Error).message}`,
    );
  }
  const text = await response.text();
  if (!response.ok) throw new Error(`the simulator refused the run (${response.status}): ${text}`);
  process.stdout.write(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
}

async function main(argv: string[]): Promise<void> {
  const command = parseCli(argv);
  if (command.command === 'help') process.stdout.write(USAGE);
  else if (command.command === 'serve') await serve(command);
  else await run(command);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`zekt-github-sim: ${message}\n`);
  if (error instanceof CliUsageError) process.stderr.write('Run zekt-github-sim --help for usage.\n');
  process.exit(error instanceof CliUsageError ? 2 : 1);
});
