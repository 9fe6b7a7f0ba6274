import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setUpWorld, type World } from '../../../apps/server/test/support/demo-world.js';
import { eventually, type Harness, startHarness } from '../../../apps/server/test/support/harness.js';
import { startProviderRun } from './support/provider-run.js';
import { runActionStep } from './support/run-action.js';

/**
 * The message step against a service whose schema is enforced, run as the runner runs it (the
 * committed bundle): a message that breaks the schema fails the step with one error annotation per
 * violation and a table in the job summary, and nothing reaches the consumer; a message that
 * matches is delivered with the schema's version.
 */
let h: Harness;
let world: World;

beforeEach(async () => {
  h = await startHarness({ transport: 'inject' });
  world = await setUpWorld(h);
  const saved = await h.call('PUT', `/api/v1/services/${world.serviceId}/schema`, {
    token: world.providerToken,
    body: {
      enforcement: 'enforce',
      schema: {
        type: 'object',
        required: ['version', 'environment'],
        properties: {
          version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$' },
          environment: { enum: ['staging', 'production'] },
        },
      },
    },
  });
  if (saved.status !== 200) throw new Error(`PUT schema: ${JSON.stringify(saved.body)}`);
});

afterEach(async () => {
  await h.close();
});

describe('message mode and an enforced schema', () => {
  it('fails the step with one annotation per violation and a summary table; nothing is delivered', async () => {
    const run = await startProviderRun(h, { providerToken: world.providerToken });
    const step = await runActionStep({
      inputs: {
        'zekt-api-url': h.url,
        'event-type': 'acme-deployed',
        payload: JSON.stringify({ version: 'v1', environment: 'dev' }),
      },
      env: run.env,
    });
    expect(step.exitCode).toBe(1);
    expect(step.outputs.status).toBe('failed');
    // Workflow commands escape `:` and `,` in properties (the runner decodes them).
    const title = 'Zekt%3A the message does not match the schema of acme-deploys (version 1)';
    const annotations = step.stdout.split('\n').filter((line) => line.startsWith('::error title='));
    expect(annotations).toEqual([
      `::error title=${title}::/version: must match pattern "^\\d+\\.\\d+\\.\\d+$"`,
      `::error title=${title}::/environment: must be one of "staging", "production"`,
    ]);
    // The step's own failure follows, with the service's detail.
    expect(step.errors).toHaveLength(3);
    expect(step.errors[2]).toContain('Zekt refused the message (422): payload_schema_violation');
    expect(step.summary).toContain(
      'Zekt refused the message: it does not match the schema of acme-deploys (version 1)',
    );
    expect(step.summary).toContain('<th>Where</th><th>Problem</th>');
    expect(step.summary).toContain(
      '<td>/environment</td><td>must be one of &quot;staging&quot;, &quot;production&quot;</td>',
    );
    expect(step.summary).toContain('zekt schema check');

    await run.complete();
    // The run sent no message the schema accepts: it is blocked, nothing goes to the consumer.
    await eventually(async () => {
      const row = await h.zekt.store.db
        .selectFrom('events')
        .select('route_status')
        .where('run_id', '=', run.runId)
        .executeTakeFirst();
      return row?.route_status === 'blocked' ? true : undefined;
    });
    expect(h.sim.dispatches({ repository: 'globex/app' })).toEqual([]);
  });

  it('a matching message passes and is delivered with client_payload.zekt.schemaVersion', async () => {
    const run = await startProviderRun(h, { providerToken: world.providerToken });
    const step = await runActionStep({
      inputs: {
        'zekt-api-url': h.url,
        'event-type': 'acme-deployed',
        payload: JSON.stringify({ version: '1.2.3', environment: 'production' }),
      },
      env: run.env,
    });
    expect(step.errors).toEqual([]);
    expect(step.outputs.status).toBe('accepted');
    await run.complete();
    const dispatch = await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[0]);
    const zekt = (dispatch.clientPayload as { zekt: Record<string, unknown> }).zekt;
    expect(zekt.payload).toEqual({ version: '1.2.3', environment: 'production' });
    expect(zekt.schemaVersion).toBe(1);
  });

  it('warn mode: the step passes with one warning annotation per violation', async () => {
    await h.call('PUT', `/api/v1/services/${world.serviceId}/schema`, {
      token: world.providerToken,
      body: { enforcement: 'warn' },
    });
    const run = await startProviderRun(h, { providerToken: world.providerToken });
    const step = await runActionStep({
      inputs: { 'zekt-api-url': h.url, 'event-type': 'acme-deployed', payload: '{"version":"1.2.3"}' },
      env: run.env,
    });
    expect(step.exitCode).toBe(0);
    expect(step.outputs.status).toBe('accepted');
    expect(step.warnings).toEqual(['/environment: is required']);
  });
});
