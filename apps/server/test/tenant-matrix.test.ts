import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpWorld, type World } from './support/demo-world.js';
import { eventually, type Harness, startHarness } from './support/harness.js';
import { fillPath, type JsonSchema, listOperations, type Operation } from './support/openapi-operations.js';
import { changedTables, snapshotStore } from './support/store-snapshot.js';

/**
 * The cross-tenant matrix, generated from the OpenAPI route table: every management
 * route, called by a member of another account with that account's objects, answers 404 exactly
 * as for an object that does not exist, and changes nothing; every list leaves them out. A route
 * added to the server is in the matrix at once — one with a path parameter the matrix cannot fill
 * fails here until its victim object is named below.
 */
let h: Harness;
let world: World;
let malloryToken: string;
let victim: Record<string, string>;
let operations: Operation[];

beforeAll(async () => {
  h = await startHarness({ transport: 'inject' });
  world = await setUpWorld(h);
  await h.sim.createInstallation({
    account: { login: 'initech', type: 'Organization' },
    repositories: ['tps'],
    sender: { login: 'mallory' },
  });
  malloryToken = await h.tokenFor('mallory');
  await h.sim.runWorkflow({ repository: 'acme/api', workflow: 'deploy.yml' });
  const dispatch = await eventually(() => h.sim.dispatches({ repository: 'globex/app' })[0]);
  const deliveryId = (dispatch.clientPayload as { zekt: { deliveryId: string } }).zekt.deliveryId;
  const recovery = await h.call('POST', `/api/v1/connections/${world.subscriptionId}/recoveries`, {
    token: world.consumerToken,
    body: { since: new Date(Date.now() - 60_000).toISOString() },
  });
  if (recovery.status !== 202) throw new Error(`recovery: ${JSON.stringify(recovery.body)}`);
  // Cancelled, or finished by the worker, so no background work changes the store during the matrix.
  await h.call('POST', `/api/v1/connections/${world.subscriptionId}/recoveries/${recovery.body.id}/cancel`, {
    token: world.consumerToken,
  });
  await eventually(async () => {
    const job = await h.call(
      'GET',
      `/api/v1/connections/${world.subscriptionId}/recoveries/${recovery.body.id}`,
      {
        token: world.consumerToken,
      },
    );
    return job.body.status !== 'running' ? true : undefined;
  });
  const token = await h.call('POST', '/api/v1/tokens', {
    token: world.providerToken,
    body: { name: 'alice only', expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
  });
  if (token.status !== 201) throw new Error(`token: ${JSON.stringify(token.body)}`);
  // acme (alice) provides, globex (bob) consumes: both are "another account" for mallory.
  victim = {
    recoveryId: recovery.body.id,
    tokenId: token.body.id,
    account: 'acme',
    owner: 'acme',
    repo: 'api',
    file: 'deploy.yml',
    deliveryId,
    'services.id': world.serviceId,
    'subscriptions.id': world.subscriptionId,
    'connections.id': world.subscriptionId,
  };
  operations = listOperations((await h.call('GET', '/api/openapi.json')).body).filter((op) =>
    /^\/api\/(v1|replay|connections)\//.test(op.path),
  );
});
afterAll(async () => {
  await h.close();
});

/** The victim object a path parameter names; `id` is read by the resource it belongs to. */
function victimValue(operation: Operation, name: string): string {
  const resource = /\/(services|subscriptions|connections)\/\{id\}/.exec(operation.path)?.[1];
  const value = victim[name === 'id' && resource ? `${resource}.${name}` : name];
  if (value === undefined) {
    throw new Error(
      `${operation.method} ${operation.path}: no victim object for {${name}}; name one in tenant-matrix.test.ts`,
    );
  }
  return value;
}

/** A body that passes the route's schema and names the victim's objects wherever it names one. */
function victimBody(schema: JsonSchema | null): Record<string, unknown> | undefined {
  if (!schema) return undefined;
  const byName: Record<string, unknown> = {
    repository: 'acme/api',
    workflow: 'deploy.yml',
    serviceId: world.serviceId,
    deliversTo: 'globex/app',
    slug: 'stolen',
  };
  const body: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (!(schema.required ?? []).includes(name) && byName[name] === undefined) continue;
    body[name] = byName[name] ?? sample(property);
  }
  return body;
}

function sample(schema: JsonSchema): unknown {
  if (schema.anyOf?.length) return sample(schema.anyOf[0]!);
  if (schema.enum?.length) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  return type === 'boolean' ? false : type === 'array' ? [] : type === 'integer' ? 1 : 'x';
}

/** Lists that show other accounts' objects by design. */
const PUBLIC_BY_DESIGN = new Set([
  // The directory shows every account's published public services: that is what it is for.
  'GET /api/v1/directory',
  // …and their message schemas (an unpublished service's is 404: event-contracts.test.ts).
  'GET /api/v1/directory/{id}/schema',
]);

describe('the cross-tenant matrix of the OpenAPI route table', () => {
  it('answers 404 to another account on every route that names an object, and changes nothing', async () => {
    const before = await snapshotStore(h.zekt.store, ['rate_limit_counters']);
    const scoped = operations.filter(
      (op) =>
        !PUBLIC_BY_DESIGN.has(`${op.method} ${op.path}`) &&
        (op.pathParams.length > 0 ||
          (op.body && /\b(repository|serviceId|deliversTo)\b/.test(JSON.stringify(op.body)))),
    );
    expect(scoped.length).toBeGreaterThan(15);
    for (const operation of scoped) {
      const values = Object.fromEntries(
        operation.pathParams.map((name) => [name, victimValue(operation, name)]),
      );
      const body = victimBody(operation.body);
      // Required query parameters get a value that passes the schema, so ownership is what answers.
      const query = new URLSearchParams(
        operation.queryParams
          .filter((p) => p.required)
          .map((p): [string, string] => [p.name, String(sample(p.schema))]),
      ).toString();
      const url = fillPath(operation.path, values) + (query ? `?${query}` : '');
      const response = await h.call(operation.method, url, {
        token: malloryToken,
        ...(body === undefined ? {} : { body }),
      });
      expect(response.status, `${operation.method} ${operation.path}: ${JSON.stringify(response.body)}`).toBe(
        404,
      );
      expect(response.contentType).toContain('application/problem+json');
    }
    expect(changedTables(before, await snapshotStore(h.zekt.store, ['rate_limit_counters']))).toEqual([]);
  });

  it('answers 404 to an account filter naming another account, and leaves its objects out of every list', async () => {
    const identifiers = [
      'acme/api',
      'globex/app',
      world.serviceId,
      world.subscriptionId,
      victim.deliveryId!,
      'acme-deploys',
    ];
    const lists = operations.filter((op) => op.method === 'GET' && op.pathParams.length === 0);
    expect(lists.length).toBeGreaterThan(5);
    for (const operation of lists) {
      const key = `${operation.method} ${operation.path}`;
      const byAccount = operation.queryParams.some((p) => p.name === 'account');
      if (byAccount) {
        const filtered = await h.call('GET', `${operation.path}?account=acme`, { token: malloryToken });
        expect(filtered.status, key).toBe(404);
      }
      const own = byAccount ? '?account=initech' : '';
      const response = await h.call('GET', `${operation.path}${own}`, { token: malloryToken });
      expect(response.status, key).toBe(200);
      const text = JSON.stringify(response.body);
      const allowed = PUBLIC_BY_DESIGN.has(key) ? [world.serviceId, 'acme/api', 'acme-deploys'] : [];
      const leaked = identifiers.filter((id) => !allowed.includes(id) && text.includes(id));
      expect(leaked, key).toEqual([]);
    }
  });
});
