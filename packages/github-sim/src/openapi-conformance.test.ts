import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  api,
  appJwt,
  installationToken,
  manualClock,
  userAccessToken,
} from '../test/support/github-client.js';
import { type Receiver, startReceiver } from '../test/support/http-receiver.js';
import { toJsonSchema } from '../test/support/openapi-schema.js';
import { createTestSimulator } from '../test/support/test-simulator.js';
import { waitUntil } from '../test/support/wait-until.js';
import type { GitHubSimulator } from './index.js';

/**
 * Every REST operation the simulator implements, exercised on success and error paths, must
 * answer a status GitHub's OpenAPI description declares for it, with a body that validates
 * against the declared schema (`@octokit/openapi`, `api.github.com.deref.json`).
 */

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
}
interface Spec {
  paths: Record<string, Record<string, Operation>>;
  'x-webhooks': Record<
    string,
    { post: { requestBody: { content: { 'application/json': { schema: object } } } } }
  >;
}

const require = createRequire(import.meta.url);
const spec = JSON.parse(
  readFileSync(require.resolve('@octokit/openapi/generated/api.github.com.deref.json'), 'utf8'),
) as Spec;

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
const compiled = new Map<string, ValidateFunction>();
function validatorFor(key: string, schema: object): ValidateFunction {
  let validate = compiled.get(key);
  if (validate === undefined) {
    validate = ajv.compile(toJsonSchema(schema) as object);
    compiled.set(key, validate);
  }
  return validate;
}

/** GitHub's "Basic Error" schema, taken from an operation that declares it. */
const basicErrorSchema =
  spec.paths['/app/installations/{installation_id}']?.get?.responses['404']?.content?.['application/json']
    ?.schema ?? {};

/**
 * Statuses GitHub really returns that its description omits for an operation. Each is validated
 * against Basic Error. Why each is here:
 * - 401: every authenticated endpoint answers 401 to a bad/expired JWT or token, but most
 *   operations (e.g. `GET /app`, `GET /repos/{owner}/{repo}`) do not list it.
 * - 403 on dispatches: `Resource not accessible by integration` without `contents: write`, and
 *   rate limits (primary and secondary); 429 and 503 on dispatches: rate limits and outages, which
 *   the simulator serves as injected faults.
 * - 404 on `GET /app` (`Integration not found`, wrong App id) and on `GET …/actions/runs/{run_id}`
 *   (unknown run): the description lists only 200.
 */
const UNDECLARED_BUT_REAL: Record<string, string[]> = {
  'GET /app': ['401', '404'],
  'GET /app/installations': ['401'],
  'GET /app/installations/{installation_id}': ['401'],
  'GET /repos/{owner}/{repo}/installation': ['401'],
  'GET /repos/{owner}/{repo}': ['401'],
  'GET /repos/{owner}/{repo}/hooks': ['401', '403'],
  'GET /repos/{owner}/{repo}/hooks/{hook_id}': ['401'],
  'PATCH /repos/{owner}/{repo}/hooks/{hook_id}': ['401'],
  'DELETE /repos/{owner}/{repo}/hooks/{hook_id}': ['401'],
  'POST /repos/{owner}/{repo}/hooks/{hook_id}/pings': ['401'],
  'POST /repos/{owner}/{repo}/dispatches': ['401', '403', '429', '503'],
  'GET /repos/{owner}/{repo}/actions/runs/{run_id}': ['401', '404'],
  // workflow_dispatch: 403 without `actions: write`, 404 for an unknown workflow, 422 for a body or
  // a workflow GitHub refuses (no trigger, undeclared inputs, unknown ref); the description lists
  // only 200 and 204.
  'POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches': ['401', '403', '404', '422'],
  // Webhook deliveries: an unknown hook or delivery is 404, a bad JWT or token 401, as everywhere.
  'GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries': ['401', '404'],
  'GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}': ['401', '404'],
  'POST /repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}/attempts': ['401', '404'],
  'GET /app/hook/deliveries': ['401'],
  'GET /app/hook/deliveries/{delivery_id}': ['401', '404'],
  'POST /app/hook/deliveries/{delivery_id}/attempts': ['401', '404'],
};

const exercised = new Map<string, Set<string>>();

function expectConforms(operationKey: string, response: ApiResponse): void {
  const [method = '', path = ''] = operationKey.split(' ');
  const operation = spec.paths[path]?.[method.toLowerCase()];
  expect(operation, `${operationKey} is not in GitHub's description`).toBeDefined();
  const status = String(response.status);
  let statuses = exercised.get(operationKey);
  if (statuses === undefined) {
    statuses = new Set();
    exercised.set(operationKey, statuses);
  }
  statuses.add(status);

  const declared = operation?.responses[status];
  let schema: object | undefined;
  if (declared !== undefined) {
    schema = declared.content?.['application/json']?.schema;
    if (declared.content === undefined) {
      expect(response.body, `${operationKey} ${status} declares no body`).toBeNull();
      return;
    }
  } else {
    expect(
      UNDECLARED_BUT_REAL[operationKey] ?? [],
      `${operationKey} answered ${status}, which its description does not declare`,
    ).toContain(status);
    schema = basicErrorSchema;
  }
  if (schema === undefined) return;
  const validate = validatorFor(`${operationKey} ${declared === undefined ? 'basic-error' : status}`, schema);
  const valid = validate(response.body);
  expect(
    valid,
    `${operationKey} ${status}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(response.body).slice(0, 500)}`,
  ).toBe(true);
}

function expectWebhookConforms(event: string, action: string | null, payload: unknown): void {
  const key = action === null ? event.replaceAll('_', '-') : `${event}-${action}`.replaceAll('_', '-');
  const schema = spec['x-webhooks'][key]?.post.requestBody.content['application/json'].schema;
  expect(schema, `no webhook schema ${key}`).toBeDefined();
  const validate = validatorFor(`webhook ${key}`, schema ?? {});
  expect(validate(payload), `${key}: ${ajv.errorsText(validate.errors)}`).toBe(true);
}

let sim: GitHubSimulator;
let receiver: Receiver;
const clock = manualClock();
beforeAll(async () => {
  receiver = await startReceiver();
  sim = await createTestSimulator({
    clock,
    allowPrivateHookUrls: true,
    app: { webhookUrl: `${receiver.url}/app`, events: ['workflow_run'] },
  });
});
afterAll(async () => {
  await sim.close();
  await receiver.close();
});

describe('REST responses conform to GitHub’s OpenAPI description', () => {
  it('answers every implemented operation with a declared status and a valid body', async () => {
    const now = () => Math.floor(clock.now().getTime() / 1000);
    const jwt = `Bearer ${await appJwt(sim, now())}`;
    const expiredJwt = `Bearer ${await appJwt(sim, now() - 3600)}`;
    const main = await sim.createInstallation({
      account: { login: 'acme', type: 'Organization' },
      repositories: ['provider', { name: 'consumer', private: true }],
      sender: { login: 'octocat' },
    });
    const limited = await sim.createInstallation({
      account: { login: 'reader' },
      repositories: ['docs'],
      permissions: { metadata: 'read', contents: 'read' },
    });
    const id = main.installation.id;

    // App (JWT) endpoints.
    expectConforms('GET /app', await api(sim, 'GET', '/app', { authorization: jwt }));
    expectConforms('GET /app', await api(sim, 'GET', '/app', { authorization: expiredJwt }));
    expectConforms(
      'GET /app/installations',
      await api(sim, 'GET', '/app/installations', { authorization: jwt }),
    );
    expectConforms(
      'GET /app/installations',
      await api(sim, 'GET', '/app/installations', { authorization: expiredJwt }),
    );
    const installationPath = '/app/installations/{installation_id}';
    expectConforms(
      `GET ${installationPath}`,
      await api(sim, 'GET', `/app/installations/${id}`, { authorization: jwt }),
    );
    expectConforms(
      `GET ${installationPath}`,
      await api(sim, 'GET', '/app/installations/1', { authorization: jwt }),
    );
    const tokens = 'POST /app/installations/{installation_id}/access_tokens';
    const created = await api(sim, 'POST', `/app/installations/${id}/access_tokens`, { authorization: jwt });
    expectConforms(tokens, created);
    expectConforms(
      tokens,
      await api(sim, 'POST', `/app/installations/${id}/access_tokens`, {
        authorization: jwt,
        body: { repositories: ['provider'], permissions: { contents: 'read' } },
      }),
    );
    expectConforms(
      tokens,
      await api(sim, 'POST', `/app/installations/${id}/access_tokens`, {
        authorization: jwt,
        body: { repositories: ['nope'] },
      }),
    );
    expectConforms(
      tokens,
      await api(sim, 'POST', '/app/installations/1/access_tokens', { authorization: jwt }),
    );
    expectConforms(
      tokens,
      await api(sim, 'POST', `/app/installations/${id}/access_tokens`, { authorization: expiredJwt }),
    );
    const repoInstallation = 'GET /repos/{owner}/{repo}/installation';
    expectConforms(
      repoInstallation,
      await api(sim, 'GET', '/repos/acme/provider/installation', { authorization: jwt }),
    );
    expectConforms(
      repoInstallation,
      await api(sim, 'GET', '/repos/acme/missing/installation', { authorization: jwt }),
    );
    expectConforms(
      repoInstallation,
      await api(sim, 'GET', '/repos/acme/provider/installation', { authorization: expiredJwt }),
    );

    // Installation-token endpoints.
    const token = `token ${(created.body as { token: string }).token}`;
    const readerToken = `token ${await installationToken(sim, limited.installation.id, {}, now())}`;
    expectConforms(
      'GET /installation/repositories',
      await api(sim, 'GET', '/installation/repositories', { authorization: token }),
    );
    expectConforms(
      'GET /installation/repositories',
      await api(sim, 'GET', '/installation/repositories', { authorization: 'token ghs_unknown' }),
    );
    expectConforms(
      'GET /repos/{owner}/{repo}',
      await api(sim, 'GET', '/repos/acme/consumer', { authorization: token }),
    );
    expectConforms(
      'GET /repos/{owner}/{repo}',
      await api(sim, 'GET', '/repos/reader/docs', { authorization: token }),
    );
    expectConforms(
      'GET /repos/{owner}/{repo}',
      await api(sim, 'GET', '/repos/acme/consumer', { authorization: 'token nope' }),
    );

    const hooks = '/repos/{owner}/{repo}/hooks';
    const hookBody = {
      config: { url: `${receiver.url}/hook`, content_type: 'json', secret: 'x' },
      events: ['workflow_run'],
    };
    const hook = await api(sim, 'POST', '/repos/acme/provider/hooks', {
      authorization: token,
      body: hookBody,
    });
    expectConforms(`POST ${hooks}`, hook);
    expectConforms(
      `POST ${hooks}`,
      await api(sim, 'POST', '/repos/acme/provider/hooks', { authorization: token, body: hookBody }),
    );
    expectConforms(
      `POST ${hooks}`,
      await api(sim, 'POST', '/repos/acme/provider/hooks', {
        authorization: token,
        body: { config: { url: `${receiver.url}/form`, content_type: 'form' } },
      }),
    );
    expectConforms(
      `POST ${hooks}`,
      await api(sim, 'POST', '/repos/reader/docs/hooks', { authorization: token, body: hookBody }),
    );
    expectConforms(
      `POST ${hooks}`,
      await api(sim, 'POST', '/repos/reader/docs/hooks', { authorization: readerToken, body: hookBody }),
    );
    expectConforms(
      `GET ${hooks}`,
      await api(sim, 'GET', '/repos/acme/provider/hooks', { authorization: token }),
    );
    expectConforms(
      `GET ${hooks}`,
      await api(sim, 'GET', '/repos/reader/docs/hooks', { authorization: token }),
    );
    expectConforms(
      `GET ${hooks}`,
      await api(sim, 'GET', '/repos/reader/docs/hooks', { authorization: readerToken }),
    );
    const hookId = (hook.body as { id: number }).id;
    const one = `${hooks}/{hook_id}`;
    expectConforms(
      `GET ${one}`,
      await api(sim, 'GET', `/repos/acme/provider/hooks/${hookId}`, { authorization: token }),
    );
    expectConforms(
      `GET ${one}`,
      await api(sim, 'GET', '/repos/acme/provider/hooks/1', { authorization: token }),
    );
    expectConforms(
      `PATCH ${one}`,
      await api(sim, 'PATCH', `/repos/acme/provider/hooks/${hookId}`, {
        authorization: token,
        body: { add_events: ['push'] },
      }),
    );
    expectConforms(
      `PATCH ${one}`,
      await api(sim, 'PATCH', `/repos/acme/provider/hooks/${hookId}`, {
        authorization: token,
        body: { config: { url: 'http://localhost/x', content_type: 'form' } },
      }),
    );
    expectConforms(
      `PATCH ${one}`,
      await api(sim, 'PATCH', '/repos/acme/provider/hooks/1', { authorization: token, body: {} }),
    );
    expectConforms(
      `POST ${one}/pings`,
      await api(sim, 'POST', `/repos/acme/provider/hooks/${hookId}/pings`, { authorization: token }),
    );
    expectConforms(
      `POST ${one}/pings`,
      await api(sim, 'POST', '/repos/acme/provider/hooks/1/pings', { authorization: token }),
    );

    // Webhook deliveries: the hook's pings (one failed by a drop rule), the App's installation events.
    sim.dropWebhooks({ event: 'ping', repository: 'acme/provider' });
    await api(sim, 'POST', `/repos/acme/provider/hooks/${hookId}/pings`, { authorization: token });
    await waitUntil(
      () => (sim.webhookDeliveries().filter((d) => d.event === 'ping').length >= 3 ? true : undefined),
      'three pings',
    );
    const hookDeliveries = `${one}/deliveries`;
    const listedPage = await api(sim, 'GET', `/repos/acme/provider/hooks/${hookId}/deliveries?per_page=2`, {
      authorization: token,
    });
    expectConforms(`GET ${hookDeliveries}`, listedPage);
    const listedItems = listedPage.body as Array<{ id: number; status: string; status_code: number }>;
    expect(listedItems[0]).toMatchObject({ status: 'failed to connect', status_code: 0 });
    const nextLink = /<([^>]+)>; rel="next"/.exec(listedPage.headers.get('link') ?? '')?.[1];
    expect(nextLink).toMatch(/[?&]cursor=v1_\d+/);
    const nextPage = await api(sim, 'GET', (nextLink ?? '').slice(sim.apiUrl.length), {
      authorization: token,
    });
    expectConforms(`GET ${hookDeliveries}`, nextPage);
    expect((nextPage.body as unknown[]).length).toBe(1);
    expectConforms(
      `GET ${hookDeliveries}`,
      await api(sim, 'GET', `/repos/acme/provider/hooks/${hookId}/deliveries?cursor=nope`, {
        authorization: token,
      }),
    );
    expectConforms(
      `GET ${hookDeliveries}`,
      await api(sim, 'GET', `/repos/acme/provider/hooks/${hookId}/deliveries?status=lost`, {
        authorization: token,
      }),
    );
    expectConforms(
      `GET ${hookDeliveries}`,
      await api(sim, 'GET', '/repos/acme/provider/hooks/1/deliveries', { authorization: token }),
    );
    const deliveryId = listedItems[0]?.id;
    expectConforms(
      `GET ${hookDeliveries}/{delivery_id}`,
      await api(sim, 'GET', `/repos/acme/provider/hooks/${hookId}/deliveries/${deliveryId}`, {
        authorization: token,
      }),
    );
    expectConforms(
      `GET ${hookDeliveries}/{delivery_id}`,
      await api(sim, 'GET', `/repos/acme/provider/hooks/${hookId}/deliveries/1`, { authorization: token }),
    );
    expectConforms(
      `POST ${hookDeliveries}/{delivery_id}/attempts`,
      await api(sim, 'POST', `/repos/acme/provider/hooks/${hookId}/deliveries/${deliveryId}/attempts`, {
        authorization: token,
      }),
    );
    expectConforms(
      `POST ${hookDeliveries}/{delivery_id}/attempts`,
      await api(sim, 'POST', `/repos/acme/provider/hooks/${hookId}/deliveries/1/attempts`, {
        authorization: token,
      }),
    );
    const appListed = await api(sim, 'GET', '/app/hook/deliveries', { authorization: jwt });
    expectConforms('GET /app/hook/deliveries', appListed);
    expectConforms(
      'GET /app/hook/deliveries',
      await api(sim, 'GET', '/app/hook/deliveries', { authorization: expiredJwt }),
    );
    const appDeliveryId = (appListed.body as Array<{ id: number }>)[0]?.id;
    expectConforms(
      'GET /app/hook/deliveries/{delivery_id}',
      await api(sim, 'GET', `/app/hook/deliveries/${appDeliveryId}`, { authorization: jwt }),
    );
    expectConforms(
      'GET /app/hook/deliveries/{delivery_id}',
      await api(sim, 'GET', '/app/hook/deliveries/1', { authorization: jwt }),
    );
    expectConforms(
      'POST /app/hook/deliveries/{delivery_id}/attempts',
      await api(sim, 'POST', `/app/hook/deliveries/${appDeliveryId}/attempts`, { authorization: jwt }),
    );
    expectConforms(
      'POST /app/hook/deliveries/{delivery_id}/attempts',
      await api(sim, 'POST', '/app/hook/deliveries/1/attempts', { authorization: jwt }),
    );

    const dispatches = 'POST /repos/{owner}/{repo}/dispatches';
    expectConforms(
      dispatches,
      await api(sim, 'POST', '/repos/acme/consumer/dispatches', {
        authorization: token,
        body: { event_type: 'go' },
      }),
    );
    expectConforms(
      dispatches,
      await api(sim, 'POST', '/repos/acme/consumer/dispatches', { authorization: token, body: {} }),
    );
    expectConforms(
      dispatches,
      await api(sim, 'POST', '/repos/reader/docs/dispatches', {
        authorization: token,
        body: { event_type: 'go' },
      }),
    );
    expectConforms(
      dispatches,
      await api(sim, 'POST', '/repos/reader/docs/dispatches', {
        authorization: readerToken,
        body: { event_type: 'go' },
      }),
    );

    // Synthesised failures (injected faults) are GitHub's basic error too.
    sim.injectFaults({
      method: 'POST',
      path: '/repos/*/*/dispatches',
      faults: [
        { kind: 'rate_limit' },
        { kind: 'rate_limit', status: 429 },
        { kind: 'secondary_rate_limit' },
        { kind: 'secondary_rate_limit', status: 429 },
        { kind: 'retry_after', retryAfterSeconds: 5 },
        { kind: 'retry_after', status: 429, retryAfterSeconds: 5 },
        { kind: 'status', status: 503 },
      ],
    });
    const faulted: number[] = [];
    for (let i = 0; i < 7; i++) {
      const response = await api(sim, 'POST', '/repos/acme/consumer/dispatches', {
        authorization: token,
        body: { event_type: 'go' },
      });
      faulted.push(response.status);
      expectConforms(dispatches, response);
    }
    expect(faulted).toEqual([403, 429, 403, 429, 503, 429, 503]);
    expect(sim.faults()[0]?.remaining).toBe(0);

    const workflowDispatches = 'POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches';
    sim.defineConsumerWorkflow({
      repository: 'acme/consumer',
      workflow: 'on-zekt.yml',
      on: { workflow_dispatch: { inputs: { zekt: { required: true } } } },
    });
    const dispatchTo = (repo: string, workflow: string, body: unknown, authorization = token) =>
      api(sim, 'POST', `/repos/${repo}/actions/workflows/${workflow}/dispatches`, { authorization, body });
    const zektInput = { zekt: '{"deliveryId":"delivery-x"}' };
    const detailed = await dispatchTo('acme/consumer', 'on-zekt.yml', {
      ref: 'main',
      inputs: zektInput,
      return_run_details: true,
    });
    expect(detailed.status).toBe(200);
    expectConforms(workflowDispatches, detailed);
    expectConforms(
      workflowDispatches,
      await dispatchTo('acme/consumer', 'on-zekt.yml', { ref: 'main', inputs: zektInput }),
    );
    expectConforms(workflowDispatches, await dispatchTo('acme/consumer', 'missing.yml', { ref: 'main' }));
    expectConforms(
      workflowDispatches,
      await dispatchTo('acme/consumer', 'on-zekt.yml', { ref: 'main', inputs: { x: '1' } }),
    );
    expectConforms(
      workflowDispatches,
      await dispatchTo('reader/docs', 'on-zekt.yml', { ref: 'main' }, readerToken),
    );
    expectConforms(
      'GET /repos/{owner}/{repo}/actions/runs/{run_id}',
      await api(
        sim,
        'GET',
        `/repos/acme/consumer/actions/runs/${(detailed.body as { workflow_run_id: number }).workflow_run_id}`,
        {
          authorization: token,
        },
      ),
    );

    const { run } = await sim.runWorkflow({
      repository: 'acme/provider',
      workflow: 'deploy.yml',
      send: { requested: true, inProgress: true },
    });
    const runs = 'GET /repos/{owner}/{repo}/actions/runs/{run_id}';
    expectConforms(
      runs,
      await api(sim, 'GET', `/repos/acme/provider/actions/runs/${run.id}`, { authorization: token }),
    );
    expectConforms(
      runs,
      await api(sim, 'GET', '/repos/acme/provider/actions/runs/1', { authorization: token }),
    );

    expectConforms(
      `DELETE ${one}`,
      await api(sim, 'DELETE', `/repos/acme/provider/hooks/${hookId}`, { authorization: token }),
    );
    expectConforms(
      `DELETE ${one}`,
      await api(sim, 'DELETE', `/repos/acme/provider/hooks/${hookId}`, { authorization: token }),
    );

    // User-token endpoints (the `ghu_` tokens of the OAuth web flow): octocat installed acme's App.
    const userToken = `Bearer ${await userAccessToken(sim, 'octocat')}`;
    expectConforms('GET /user', await api(sim, 'GET', '/user', { authorization: userToken }));
    expectConforms('GET /user', await api(sim, 'GET', '/user'));
    expectConforms('GET /user', await api(sim, 'GET', '/user', { authorization: 'token ghu_unknown' }));
    expectConforms('GET /user', await api(sim, 'GET', '/user', { authorization: token }));
    const userInstallations = 'GET /user/installations';
    const listed = await api(sim, 'GET', '/user/installations', { authorization: userToken });
    expect(listed.body).toMatchObject({ total_count: 1, installations: [{ id }] });
    expectConforms(userInstallations, listed);
    expectConforms(
      userInstallations,
      await api(sim, 'GET', '/user/installations?per_page=1&page=2', { authorization: userToken }),
    );
    expectConforms(userInstallations, await api(sim, 'GET', '/user/installations'));
    expectConforms(
      userInstallations,
      await api(sim, 'GET', '/user/installations', { authorization: 'token ghu_unknown' }),
    );
    expectConforms(userInstallations, await api(sim, 'GET', '/user/installations', { authorization: token }));
    expectConforms(userInstallations, await api(sim, 'GET', '/user/installations', { authorization: jwt }));

    // The manifest flow's conversion: a code from the registration pages, once.
    sim.signIn('octocat');
    const form = (fields: Record<string, string>) =>
      fetch(`${sim.url}/settings/apps/new?state=s`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
        redirect: 'manual',
      });
    const registered = await form({
      manifest: JSON.stringify({
        url: 'https://example.com',
        hook_attributes: { url: 'https://example.com/hook' },
        redirect_url: 'https://example.com/back',
        default_permissions: { contents: 'write' },
      }),
      confirm: 'create',
      name: 'Conformance',
    });
    const manifestCode = new URL(registered.headers.get('location') ?? '').searchParams.get('code');
    const conversions = 'POST /app-manifests/{code}/conversions';
    expectConforms(conversions, await api(sim, 'POST', `/app-manifests/${manifestCode}/conversions`));
    expectConforms(conversions, await api(sim, 'POST', `/app-manifests/${manifestCode}/conversions`));

    // Tokens expire: 401 everywhere, still GitHub's body.
    clock.advanceSeconds(3601);
    expectConforms(
      runs,
      await api(sim, 'GET', `/repos/acme/provider/actions/runs/${run.id}`, { authorization: token }),
    );
    expectConforms(
      dispatches,
      await api(sim, 'POST', '/repos/acme/consumer/dispatches', {
        authorization: token,
        body: { event_type: 'go' },
      }),
    );

    // Every implemented operation was exercised with a success and an error status.
    const operations = [...exercised.keys()];
    expect(operations).toHaveLength(25);
    for (const [operation, statuses] of exercised) {
      const codes = [...statuses].map(Number);
      expect(
        codes.some((code) => code < 300),
        `${operation} success`,
      ).toBe(true);
      expect(
        codes.some((code) => code >= 400),
        `${operation} error`,
      ).toBe(true);
    }
  });

  it('sends webhook payloads that conform to GitHub’s webhook schemas', async () => {
    const { installation } = await sim.createInstallation({
      account: { login: 'hooked' },
      repositories: ['svc'],
    });
    const token = await installationToken(sim, installation.id, {}, Math.floor(clock.now().getTime() / 1000));
    await api(sim, 'POST', '/repos/hooked/svc/hooks', {
      authorization: `token ${token}`,
      body: { config: { url: `${receiver.url}/svc`, content_type: 'json' }, events: ['*'] },
    });
    await sim.runWorkflow({
      repository: 'hooked/svc',
      workflow: 'ci.yml',
      send: { requested: true, inProgress: true },
    });
    // A consumer workflow's run: its webhooks, and its `github.event` (a repository_dispatch payload).
    sim.defineConsumerWorkflow({ repository: 'hooked/svc', workflow: 'on-dispatch.yml' });
    await api(sim, 'POST', '/repos/hooked/svc/dispatches', {
      authorization: `token ${token}`,
      body: { event_type: 'zekt', client_payload: { zekt: { deliveryId: 'delivery-x' } } },
    });
    const consumerRun = await waitUntil(
      () => sim.consumerRuns({ repository: 'hooked/svc' }).find((entry) => entry.status === 'completed'),
      'the consumer run',
    );
    // To the repository hook and, since the App subscribes to workflow_run, to the App hook.
    expect(consumerRun.webhooks.map((delivery) => `${delivery.hookType}.${delivery.action}`)).toEqual([
      'repository.requested',
      'app.requested',
      'repository.in_progress',
      'app.in_progress',
      'repository.completed',
      'app.completed',
    ]);
    // A workflow_dispatch run: its `github.event` is GitHub's workflow_dispatch payload.
    sim.defineConsumerWorkflow({
      repository: 'hooked/svc',
      workflow: 'on-input.yml',
      on: { workflow_dispatch: { inputs: { zekt: { required: true } } } },
    });
    const started = await api(sim, 'POST', '/repos/hooked/svc/actions/workflows/on-input.yml/dispatches', {
      authorization: `token ${token}`,
      body: { ref: 'main', inputs: { zekt: '{}' }, return_run_details: true },
    });
    const inputRun = await waitUntil(
      () =>
        sim
          .consumerRuns()
          .find(
            (entry) =>
              entry.id === (started.body as { workflow_run_id: number }).workflow_run_id &&
              entry.status === 'completed',
          ),
      'the workflow_dispatch run',
    );
    const workflowDispatchSchema =
      spec['x-webhooks']['workflow-dispatch']?.post.requestBody.content['application/json'].schema ?? {};
    const validateWorkflowDispatchEvent = validatorFor('webhook workflow-dispatch', workflowDispatchSchema);
    expect(
      validateWorkflowDispatchEvent(inputRun.event),
      `workflow_dispatch: ${ajv.errorsText(validateWorkflowDispatchEvent.errors)}`,
    ).toBe(true);
    const dispatchSchema =
      spec['x-webhooks']['repository-dispatch-sample.collected']?.post.requestBody.content['application/json']
        .schema ?? {};
    const validateDispatchEvent = validatorFor('webhook repository-dispatch', dispatchSchema);
    expect(
      validateDispatchEvent(consumerRun.event),
      `repository_dispatch: ${ajv.errorsText(validateDispatchEvent.errors)}`,
    ).toBe(true);
    await sim.addRepositories(installation.id, ['more']);
    await sim.removeRepositories(installation.id, ['hooked/more']);
    await sim.deleteInstallation(installation.id);
    await waitUntil(() => sim.webhookDeliveries().some((d) => d.event === 'ping'), 'the ping');

    const seen = new Set<string>();
    for (const delivery of sim.webhookDeliveries()) {
      expectWebhookConforms(delivery.event, delivery.action, delivery.payload);
      seen.add(`${delivery.event}.${delivery.action ?? ''}`);
    }
    expect([...seen].sort()).toEqual([
      'installation.created',
      'installation.deleted',
      'installation_repositories.added',
      'installation_repositories.removed',
      'ping.',
      'workflow_run.completed',
      'workflow_run.in_progress',
      'workflow_run.requested',
    ]);
  });

  it('lists the App webhook’s deliveries as GitHub records a 401 answer and an unreachable URL', async () => {
    // A receiver that refuses the signature (its secret differs), then a port nobody listens on.
    const refusing = await startReceiver(() => ({ status: 401, body: { detail: 'invalid signature' } }));
    const own = await createTestSimulator({ allowPrivateHookUrls: true });
    try {
      own.setAppWebhookUrl(`${refusing.url}/webhooks/github`);
      await own.createInstallation({ account: { login: 'refused' }, repositories: ['r'] });
      const closed = await refusing.close().then(() => `${refusing.url}/webhooks/github`);
      own.setAppWebhookUrl(closed);
      await own.createInstallation({ account: { login: 'unreached' }, repositories: ['r'] });

      const jwt = `Bearer ${await appJwt(own)}`;
      const listed = await api(own, 'GET', '/app/hook/deliveries', { authorization: jwt });
      expectConforms('GET /app/hook/deliveries', listed);
      const [unreached, refused] = listed.body as Array<Record<string, unknown>>;
      expect(unreached).toMatchObject({ event: 'installation', status: 'failed to connect', status_code: 0 });
      expect(refused).toMatchObject({
        event: 'installation',
        status: 'Invalid HTTP Response: 401',
        status_code: 401,
      });
      const detail = await api(own, 'GET', `/app/hook/deliveries/${String(unreached?.id)}`, {
        authorization: jwt,
      });
      expectConforms('GET /app/hook/deliveries/{delivery_id}', detail);
      expect(detail.body).toMatchObject({ url: closed, status: 'failed to connect', status_code: 0 });
    } finally {
      await own.close();
    }
  });
});
