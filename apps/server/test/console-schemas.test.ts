import { beforeEach, describe, expect, it } from 'vitest';
import { goTo, seriousViolations } from './support/console-page.js';
import { useConsoleSuite } from './support/console-suite.js';
import type { World } from './support/demo-world.js';
import { eventually, type Harness } from './support/harness.js';

/**
 * Event contracts in the console: alice gives acme-deploys a schema in enforce mode, bob reads it
 * in the Directory, a provider run with a wrong message fails and a right one is delivered; alice
 * saves a breaking version (confirmed in a dialog) and bob's Alerts show service.schema_changed.
 */
const suite = useConsoleSuite();
let h: Harness;
let world: World;
beforeEach(() => {
  ({ h, world } = suite);
});

const schemaV1 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['version', 'environment'],
  properties: {
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$', description: 'the release deployed' },
    environment: { enum: ['staging', 'production'] },
  },
};

/** The editor's checks go to the server after a pause in typing: on a busy machine, seconds. */
const WAIT = { timeout: 20_000 };

const run = (payload: unknown) =>
  h.sim.runWorkflow({
    repository: 'acme/api',
    workflow: 'deploy.yml',
    message: { zektUrl: h.url, eventType: 'acme-deployed', payload },
  });

describe('message schemas in the console', () => {
  it('alice enforces a schema, bob reads it, runs are checked, a breaking version alerts bob', async () => {
    const alice = await suite.open('alice');
    // The editor's dry runs answer 400 while the example does not match: expected here.
    alice.expect(/^400 \/api\/v1\/services\/[^/]+\/schema$/);
    await goTo(alice.page, 'Provider', 'Services');
    await alice.page.getByRole('link', { name: 'Add a schema of acme-deploys' }).click();
    await alice.page.getByRole('heading', { level: 1, name: 'Message schema' }).waitFor();
    const editor = alice.page.getByRole('region', { name: 'No schema yet' });

    // Checked as you type: a JSON mistake at once, the example by the server.
    await editor.getByLabel('JSON Schema').fill('{ "type": ');
    await expect.poll(() => editor.getByText(/^Not JSON/).count(), WAIT).toBe(1);
    await editor.getByLabel('JSON Schema').fill(JSON.stringify(schemaV1, null, 2));
    await editor.getByLabel('Example message').fill('{"version": "one", "environment": "production"}');
    await expect
      .poll(() => editor.getByText('/version: must match pattern "^\\d+\\.\\d+\\.\\d+$"').count(), WAIT)
      .toBe(1);
    await editor.getByLabel('Example message').fill('{"version": "1.2.3", "environment": "production"}');
    await editor.getByRole('radio', { name: /^Enforce —/ }).check();
    await expect
      .poll(() => editor.getByText('The schema is valid. Saving makes version 1.').count(), WAIT)
      .toBe(1);
    await editor.getByRole('button', { name: 'Save schema' }).click();
    await alice.page.getByRole('status').filter({ hasText: 'Version 1 saved (enforce).' }).waitFor();
    expect(await seriousViolations(alice.page)).toEqual([]);

    // bob sees the contract in the Directory before anything arrives.
    const bob = await suite.open('bob');
    await goTo(bob.page, null, 'Directory');
    const card = bob.page.getByRole('listitem').filter({ hasText: 'acme-deploys' });
    await card.getByText('Message schema, version 1').click();
    const fields = card.getByRole('table', { name: 'Message fields of acme-deploys' });
    await fields.waitFor();
    const version = fields.getByRole('row').filter({ hasText: '/version' });
    expect(await version.getByRole('cell').nth(0).textContent()).toBe('string');
    expect(await version.getByRole('cell').nth(1).textContent()).toBe('Required');
    expect(await version.getByRole('cell').nth(2).textContent()).toContain('the release deployed');
    expect(await card.getByText('Enforce — messages that do not match are refused').count()).toBe(1);
    expect(await card.getByText('"1.2.3"').count()).toBe(1);
    const download = card.getByRole('link', { name: 'Download the schema (version 1)' });
    expect(await download.getAttribute('download')).toBe('acme-deploys.schema.v1.json');
    expect(await seriousViolations(bob.page)).toEqual([]);

    // A run with a wrong message fails its step; a right one is delivered.
    const wrong = await run({ version: 'latest', environment: 'production' });
    expect(wrong.message?.status).toBe(422);
    const right = await run({ version: '1.2.4', environment: 'production' });
    expect(right.message?.status).toBe(201);
    const dispatch = await eventually(() =>
      h.sim
        .dispatches({ repository: 'globex/app' })
        .find((d) => 'payload' in (d.clientPayload as { zekt: object }).zekt),
    );
    expect((dispatch.clientPayload as { zekt: Record<string, unknown> }).zekt).toMatchObject({
      payload: { version: '1.2.4', environment: 'production' },
      schemaVersion: 1,
    });
    // The wrong run completed without a message: blocked, and shown to the provider.
    await goTo(alice.page, 'Provider', 'Delivery Status');
    const violations = alice.page.getByRole('table', { name: 'Schema violations' });
    await violations.waitFor();
    expect(await violations.getByText('Blocked: no message').count()).toBe(1);

    // A breaking version: the report before saving, a confirmation, then bob's alert.
    await alice.page.goto(`${h.url}/provider/services/${world.serviceId}/schema`);
    const current = alice.page.getByRole('region', { name: 'Version 1 in force' });
    await current.waitFor();
    const breaking = {
      ...schemaV1,
      properties: { ...schemaV1.properties, environment: { enum: ['production'] } },
    };
    await current.getByLabel('JSON Schema').fill(JSON.stringify(breaking, null, 2));
    await current.getByLabel('Example message').fill('');
    await expect
      .poll(
        () => current.getByText('The schema is valid. Saving makes version 2, a breaking change.').count(),
        WAIT,
      )
      .toBe(1);
    expect(
      await current.getByRole('list', { name: 'What saving changes for consumers' }).textContent(),
    ).toContain('no longer allows "staging"');
    await current.getByRole('button', { name: 'Save schema' }).click();
    const dialog = alice.page.getByRole('dialog', { name: 'Save a breaking version 2?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Save breaking version' }).click();
    await alice.page.getByRole('status').filter({ hasText: 'Version 2 saved (enforce).' }).waitFor();
    const history = alice.page.getByRole('list', { name: 'Schema versions' });
    await expect.poll(() => history.getByRole('listitem').count(), WAIT).toBeGreaterThanOrEqual(2);
    await history.getByText('Changes from version 1').click();
    expect(await history.locator('.diff-removed').first().textContent()).toContain('"staging"');

    await goTo(bob.page, null, 'Alerts');
    const alerts = bob.page.getByRole('table', { name: 'Alerts' });
    // One alert per version: the first schema, then the breaking one.
    const rows = alerts.getByRole('row').filter({ hasText: 'Service schema changed' });
    await rows.filter({ hasText: 'acme-deploys · schema version 2 (breaking)' }).waitFor();
    expect(await rows.count()).toBe(2);
    expect(await rows.filter({ hasText: 'schema version 1' }).count()).toBe(1);
    expect(await seriousViolations(bob.page)).toEqual([]);
  }, 180_000);
});
