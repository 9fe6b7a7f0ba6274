import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot } from './support/run-action.js';

/**
 * The example workflows of docs/workflows are what users copy: they must name actions that exist,
 * give only inputs those actions declare, and give every required one.
 */
interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
}
interface Workflow {
  name: string;
  'run-name'?: string;
  on: Record<string, unknown>;
  permissions?: Record<string, string>;
  jobs: Record<string, { permissions?: Record<string, string>; steps: Step[] }>;
}
interface ActionManifest {
  inputs: Record<string, { required?: boolean; default?: string }>;
  runs: { using: string };
}

function workflow(file: string): Workflow {
  // `yaml` parses YAML 1.2, where `on` is a key and not the boolean true.
  return parse(readFileSync(join(repoRoot, 'docs/workflows', file), 'utf8')) as Workflow;
}

/** The release tag the examples reference: `v` and the action's version (docs/action.md, Versions). */
const releaseTag = `v${JSON.parse(readFileSync(join(repoRoot, 'packages/action/package.json'), 'utf8')).version}`;

/** `owner/repo/path@ref` → the action.yml at `path` in this repository. */
function actionOf(uses: string): { path: string; manifest: ActionManifest } {
  const match = /^[^/]+\/zekt\/(.+)@(v\d+\.\d+\.\d+)$/.exec(uses);
  if (!match) throw new Error(`${uses} is not a Zekt action reference (<org>/zekt/<path>@${releaseTag})`);
  expect(match[2], `${uses}: the current release's tag`).toBe(releaseTag);
  const path = join(repoRoot, match[1]!, 'action.yml');
  expect(existsSync(path), `${uses}: ${path} does not exist`).toBe(true);
  return { path: match[1]!, manifest: parse(readFileSync(path, 'utf8')) as ActionManifest };
}

function expectValidZektSteps(wf: Workflow): Step[] {
  const steps = Object.values(wf.jobs).flatMap((job) => job.steps);
  const zektSteps = steps.filter((step) => step.uses !== undefined);
  expect(zektSteps.length).toBeGreaterThan(0);
  for (const step of zektSteps) {
    const { path, manifest } = actionOf(step.uses!);
    expect(manifest.runs.using).toBe('node24');
    const given = Object.keys(step.with ?? {});
    for (const key of given) expect(Object.keys(manifest.inputs), `${path}: with.${key}`).toContain(key);
    for (const [name, input] of Object.entries(manifest.inputs)) {
      if (input.required) expect(given, `${path} needs ${name}`).toContain(name);
    }
    // A sub-action's mode is fixed; a step must not change it.
    expect(given).not.toContain('mode');
  }
  return zektSteps;
}

describe('docs/workflows/provider.yml', () => {
  const wf = workflow('provider.yml');

  it('is triggered by the provider’s own events, not by a dispatch', () => {
    expect(Object.keys(wf.on)).toEqual(['push', 'workflow_dispatch']);
  });

  it('grants its job id-token: write and contents: read', () => {
    const [job] = Object.values(wf.jobs);
    expect(job!.permissions).toEqual({ 'id-token': 'write', contents: 'read' });
  });

  it('sends a message with the message action and the inputs it needs', () => {
    const [step] = expectValidZektSteps(wf);
    expect(actionOf(step!.uses!).path).toBe('packages/action');
    expect(step!.with).toMatchObject({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
      'zekt-api-url': '${{ vars.ZEKT_API_URL }}',
      'event-type': 'acme-deployed',
    });
    // The payload's template is JSON once the runner has put the values in.
    const payload = String(step!.with!.payload)
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
      .replace('${{ github.sha }}', '0123abc')
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
      .replace('${{ github.run_number }}', '42');
    expect(JSON.parse(payload)).toEqual({ sha: '0123abc', runNumber: 42 });
  });
});

describe('docs/workflows/consumer.yml', () => {
  const wf = workflow('consumer.yml');
  const [job] = Object.values(wf.jobs);
  const steps = job!.steps;

  it('is triggered by repository_dispatch of the provider’s event type', () => {
    expect(wf.on).toEqual({ repository_dispatch: { types: ['acme-deployed'] } });
  });

  it('names its runs after the delivery, for completion tracking', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
    expect(wf['run-name']).toBe('zekt ${{ github.event.client_payload.zekt.deliveryId }}');
  });

  it('grants id-token: write', () => {
    expect({ ...wf.permissions, ...job!.permissions }).toMatchObject({ 'id-token': 'write' });
  });

  it('confirms first, fetches the payload, and completes last, always, with the job’s status', () => {
    const zektSteps = expectValidZektSteps(wf);
    expect(zektSteps.map((step) => actionOf(step.uses!).path)).toEqual([
      'packages/action/confirm',
      'packages/action/fetch-payload',
      'packages/action/complete',
    ]);
    expect(steps[0]).toBe(zektSteps[0]);
    const last = steps.at(-1)!;
    expect(last).toBe(zektSteps[2]);
    expect(last.if).toBe('always()');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
    expect(last.with?.success).toBe("${{ job.status == 'success' }}");
  });

  it('reads the message from the file, never by pasting it into a script', () => {
    for (const step of steps.filter((s) => s.run !== undefined)) {
      expect(step.run).not.toContain('${{');
    }
  });
});

describe('docs/workflows/consumer-workflow-dispatch.yml', () => {
  const wf = workflow('consumer-workflow-dispatch.yml');
  const [job] = Object.values(wf.jobs);
  const steps = job!.steps;

  it('is triggered by workflow_dispatch with the one zekt input, a required string', () => {
    expect(wf.on).toEqual({
      workflow_dispatch: {
        inputs: { zekt: { description: expect.any(String), required: true, type: 'string' } },
      },
    });
  });

  it('needs no confirm or complete step: Zekt follows the run GitHub named', () => {
    const zektSteps = expectValidZektSteps(wf);
    expect(zektSteps.map((step) => actionOf(step.uses!).path)).toEqual(['packages/action/fetch-payload']);
  });

  it('reads the delivery id from the input, and the message from the file', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, as in a workflow file.
    expect(wf['run-name']).toBe('zekt ${{ fromJSON(inputs.zekt).deliveryId }}');
    expect({ ...wf.permissions, ...job!.permissions }).toMatchObject({ 'id-token': 'write' });
    for (const step of steps.filter((s) => s.run !== undefined)) {
      expect(step.run).not.toContain('${{');
    }
  });
});
