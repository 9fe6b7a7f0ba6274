import * as core from '@actions/core';
import { runConsumerStep } from './consumer-steps.js';
import { readInputs } from './inputs.js';
import { sendMessage } from './send-message.js';
import { traceConsumerStep } from './step-trace.js';
import { writeSummary } from './summary.js';

/**
 * The action: reads and checks every input first (nothing is requested when one is wrong), then
 * runs the mode. Any failure becomes `core.setFailed` with a message that says what to fix, and
 * the `status` output `failed`, so later `if: always()` steps can tell.
 *
 * @example await run() // in dist/index.js, with the runner's INPUT_* and GITHUB_* variables
 */
export async function run(env: Record<string, string | undefined> = process.env): Promise<void> {
  let mode = 'message';
  try {
    const read = readInputs((name) => core.getInput(name), env);
    if (!read.ok) {
      fail(read.problems.join('\n'));
      return;
    }
    const inputs = read.inputs;
    mode = inputs.mode;
    if (inputs.apiUrl.protocol === 'http:' && !isLoopback(inputs.apiUrl.hostname)) {
      core.warning(
        `zekt-api-url ${inputs.apiUrl.origin} is plain http: the OIDC token crosses the network unencrypted`,
      );
    }
    if (inputs.mode === 'message') await sendMessage(inputs, env);
    else
      await traceConsumerStep(inputs.mode, env, () => runConsumerStep(inputs, env), {
        setOutput: core.setOutput,
        warning: core.warning,
      });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    fail(message);
    await writeSummary(`Zekt ${mode} failed`, [['Error', message]]);
  }
}

function fail(message: string): void {
  core.setOutput('status', 'failed');
  core.setFailed(message);
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname.startsWith('127.') || hostname === '[::1]';
}
