import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../test/support/http-receiver.js';
import { createTestSimulator } from '../test/support/test-simulator.js';
import type { GitHubSimulator } from './index.js';

interface WebhookDefinition {
  name: string;
  actions: string[];
  examples: Array<Record<string, unknown>>;
}

// The community-collected real payloads of @octokit/webhooks-examples are the reference shape.
const definitions = createRequire(import.meta.url)('@octokit/webhooks-examples') as WebhookDefinition[];

function example(name: string, action: string): Record<string, unknown> {
  const found = definitions
    .find((definition) => definition.name === name)
    ?.examples.find((e) => e.action === action);
  if (found === undefined) throw new Error(`no example ${name}.${action}`);
  return found;
}

/** Objects whose keys are data (an installation's own permissions), not part of the shape. */
const DATA_MAPS = new Set(['installation.permissions']);

/** Keys of `reference` missing from `actual`, recursively for nested objects, as dotted paths. */
function missingKeys(reference: unknown, actual: unknown, prefix = ''): string[] {
  if (DATA_MAPS.has(prefix)) return [];
  if (typeof reference !== 'object' || reference === null || Array.isArray(reference)) return [];
  if (typeof actual !== 'object' || actual === null) return [prefix || '(root)'];
  const missing: string[] = [];
  for (const [key, value] of Object.entries(reference)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (!(key in actual)) missing.push(path);
    else missing.push(...missingKeys(value, (actual as Record<string, unknown>)[key], path));
  }
  return missing;
}

let sim: GitHubSimulator;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
  sim = await createTestSimulator({ app: { webhookUrl: `${receiver.url}/app`, events: ['workflow_run'] } });
});
afterAll(async () => {
  await sim.close();
  await receiver.close();
});

describe('payloads carry every field of GitHub’s example payloads', () => {
  it('installation.created and workflow_run.completed', async () => {
    const { delivery } = await sim.createInstallation({
      account: { login: 'acme', type: 'Organization' },
      repositories: ['provider'],
    });
    expect(missingKeys(example('installation', 'created'), delivery?.payload)).toEqual([]);

    const { webhooks } = await sim.runWorkflow({ repository: 'acme/provider', workflow: 'deploy.yml' });
    const appDelivery = webhooks.find((d) => d.hookType === 'app');
    // The example was sent to a repository hook (no `installation`); ours to the App hook adds it.
    expect(missingKeys(example('workflow_run', 'completed'), appDelivery?.payload)).toEqual([]);
  });
});
