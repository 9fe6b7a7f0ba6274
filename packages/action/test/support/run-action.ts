import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

/**
 * Runs the committed bundle the way the runner runs a JavaScript action: `node dist/index.js` in a
 * fresh process whose environment holds the step's inputs as `INPUT_<NAME>` (upper-cased, dashes
 * kept), the declared defaults of the inputs the step did not give, the `GITHUB_*` variables and the
 * files GitHub provides (`GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`, `GITHUB_EVENT_PATH`, `RUNNER_TEMP`).
 * Nothing of the test process's environment leaks in (no proxies, no tokens).
 */
export const actionDir = resolve(import.meta.dirname, '../..');
export const repoRoot = resolve(actionDir, '../..');
export const bundlePath = join(actionDir, 'dist/index.js');

export type ActionPath = '.' | 'confirm' | 'complete' | 'fetch-payload';

export interface ActionStepOptions {
  /** Which action.yml the step `uses:` (its input defaults apply); default the main one. */
  action?: ActionPath;
  /** The step's `with:`. */
  inputs?: Record<string, string>;
  /** Step environment: `GITHUB_*`, `ACTIONS_ID_TOKEN_REQUEST_*` (a simulated run's `env`). */
  env?: Record<string, string>;
  /** `github.event`, written to the file `GITHUB_EVENT_PATH` names. */
  event?: unknown;
}

export interface ActionStepResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** The step's outputs, read from the `GITHUB_OUTPUT` file. */
  outputs: Record<string, string>;
  /** The job summary the step wrote (`GITHUB_STEP_SUMMARY`). */
  summary: string;
  /** The messages of `::error::` commands: what the step's failure says. */
  errors: string[];
  /** The messages of `::warning::` commands. */
  warnings: string[];
  /** Values the step masked with `::add-mask::`. */
  masked: string[];
  runnerTemp: string;
}

/** The declared inputs of an action.yml, with their defaults. */
export function actionInputs(action: ActionPath): Record<string, { required?: boolean; default?: string }> {
  const manifest = parse(readFileSync(join(actionDir, action, 'action.yml'), 'utf8')) as {
    inputs: Record<string, { required?: boolean; default?: string }>;
  };
  return manifest.inputs;
}

/** `INPUT_<NAME>` as the runner and `core.getInput` spell it. */
export function inputVariable(name: string): string {
  return `INPUT_${name.replace(/ /g, '_').toUpperCase()}`;
}

export async function runActionStep(options: ActionStepOptions = {}): Promise<ActionStepResult> {
  const dir = mkdtempSync(join(tmpdir(), 'zekt-action-step-'));
  const outputFile = join(dir, 'github_output');
  const summaryFile = join(dir, 'step_summary');
  const runnerTemp = join(dir, 'runner_temp');
  writeFileSync(outputFile, '');
  writeFileSync(summaryFile, '');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    GITHUB_ACTIONS: 'true',
    GITHUB_OUTPUT: outputFile,
    GITHUB_STEP_SUMMARY: summaryFile,
    RUNNER_TEMP: runnerTemp,
  };
  for (const [name, input] of Object.entries(actionInputs(options.action ?? '.'))) {
    if (input.default !== undefined) env[inputVariable(name)] = String(input.default);
  }
  for (const [name, value] of Object.entries(options.inputs ?? {})) env[inputVariable(name)] = value;
  if (options.event !== undefined) {
    const eventPath = join(dir, 'event.json');
    writeFileSync(eventPath, JSON.stringify(options.event));
    env.GITHUB_EVENT_PATH = eventPath;
  }
  Object.assign(env, options.env);

  const child = spawn(process.execPath, [bundlePath], { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exitCode = await new Promise<number | null>((done, fail) => {
    child.once('error', fail);
    child.once('close', done);
  });
  const commands = (name: string) =>
    stdout
      .split('\n')
      .filter((line) => line.startsWith(`::${name}`))
      .map((line) => decodeCommandData(line.slice(line.indexOf('::', 2) + 2)));
  return {
    exitCode,
    stdout,
    stderr,
    outputs: parseOutputFile(readFileSync(outputFile, 'utf8')),
    summary: readFileSync(summaryFile, 'utf8'),
    errors: commands('error'),
    warnings: commands('warning'),
    masked: commands('add-mask'),
    runnerTemp,
  };
}

/** Workflow commands escape %, CR and LF in their data (`@actions/core`'s command.ts). */
function decodeCommandData(data: string): string {
  return data.replaceAll('%0A', '\n').replaceAll('%0D', '\r').replaceAll('%25', '%');
}

/**
 * Reads a `GITHUB_OUTPUT` file strictly, in the format the runner accepts: `name<<DELIMITER`, the
 * value's lines, `DELIMITER` (or `name=value` on one line). Anything else throws, so a malformed file
 * fails the test as it would fail the step.
 * https://docs.github.com/actions/reference/workflows-and-actions/workflow-commands#multiline-strings
 */
export function parseOutputFile(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const [, name, delimiter] = heredoc as unknown as [string, string, string];
      const end = lines.indexOf(delimiter, i + 1);
      if (end === -1) throw new Error(`GITHUB_OUTPUT: ${name} has no closing delimiter ${delimiter}`);
      outputs[name] = lines.slice(i + 1, end).join('\n');
      i = end;
      continue;
    }
    const simple = /^([^=]+)=(.*)$/.exec(line);
    if (!simple) throw new Error(`GITHUB_OUTPUT: malformed line ${JSON.stringify(line)}`);
    outputs[simple[1]!] = simple[2]!;
  }
  return outputs;
}
