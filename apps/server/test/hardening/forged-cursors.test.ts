import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpWorld, type World } from '../support/demo-world.js';
import { type Harness, startHarness } from '../support/harness.js';
import { fillPath, listOperations, type Operation } from '../support/openapi-operations.js';

/**
 * A list's cursor is the caller's input like any other. Each field of a decoded cursor is checked
 * against what its list's key holds before any query sees it: a forged one is a 400
 * `invalid_cursor` on both stores. PostgreSQL answered 500 to an alerts cursor whose time was
 * `NaN`, `Infinity`, `1.5` or beyond 2^63 (its bigint refused them), and any list took a field
 * holding a NUL character to the database; SQLite compared whatever it was given.
 * Every list of the OpenAPI document (every GET with a `cursor`) is walked.
 */
let h: Harness;
let world: World;
let lists: Operation[];

beforeAll(async () => {
  h = await startHarness({ transport: 'inject' });
  world = await setUpWorld(h);
  lists = listOperations((await h.call('GET', '/api/openapi.json')).body).filter(
    (op) => op.method === 'GET' && op.queryParams.some((p) => p.name === 'cursor'),
  );
});
afterAll(async () => {
  await h?.close();
});

const cursorOf = (key: unknown) => Buffer.from(JSON.stringify(key)).toString('base64url');
const ALERT_ID = `alrt_${'0'.repeat(32)}`;

/** Fields no list's key holds: not text, empty, a NUL or control character, far too long. */
const IMPOSSIBLE_FIELDS: unknown[] = [
  '',
  'x\u0000y',
  'bell\u0007',
  'a'.repeat(2_000),
  1.5,
  1e30,
  null,
  true,
  {},
  [],
];
const FORGED: Array<[string, string]> = [
  ['not base64 JSON', 'not-a-cursor!'],
  ['a JSON object', cursorOf({ after: 'x' })],
  ['a JSON string', cursorOf('sub_x')],
  ['an empty key', cursorOf([])],
  ['a key of three fields', cursorOf(['a', 'b', 'c'])],
  ...IMPOSSIBLE_FIELDS.flatMap(
    (field): Array<[string, string]> => [
      [`[${JSON.stringify(field)?.slice(0, 20)}]`, cursorOf([field])],
      [`[${JSON.stringify(field)?.slice(0, 20)} ×2]`, cursorOf([field, field])],
    ],
  ),
];

async function expectInvalidCursor(path: string, token: string, label: string) {
  const response = await h.call('GET', path, { token });
  expect([response.status, response.body?.code], `${label}: ${path}`).toEqual([400, 'invalid_cursor']);
  expect(response.contentType).toMatch(/^application\/problem\+json/);
}

describe('forged cursors', () => {
  it('every list answers a forged cursor with 400 invalid_cursor, never a 500 or a page', async () => {
    expect(lists.map((op) => op.path).sort()).toEqual([
      '/api/v1/accounts/{account}/repositories',
      '/api/v1/alerts',
      '/api/v1/audit',
      '/api/v1/connections',
      '/api/v1/connections/{id}/recoveries',
      '/api/v1/deliveries',
      '/api/v1/directory',
      '/api/v1/repositories/{owner}/{repo}/workflows',
      '/api/v1/schema-violations',
      '/api/v1/services',
      '/api/v1/services/{id}/schema/versions',
      '/api/v1/subscriptions',
      '/api/v1/tokens',
    ]);
    const values = { account: 'acme', owner: 'acme', repo: 'api' };
    for (const op of lists) {
      const id = op.path.startsWith('/api/v1/services/') ? world.serviceId : world.subscriptionId;
      const path = fillPath(op.path, { ...values, id });
      // The list answers a page without a cursor: the refusals below are about the cursor alone.
      expect((await h.call('GET', path, { token: world.providerToken })).status, path).toBe(200);
      for (const [label, cursor] of FORGED) {
        await expectInvalidCursor(`${path}?cursor=${encodeURIComponent(cursor)}`, world.providerToken, label);
      }
    }
  });

  it('alerts: a time that is not whole milliseconds a bigint holds, or an id that is not an alert id, is refused', async () => {
    const now = String(Date.now());
    const forged: unknown[][] = [
      ...[
        'NaN',
        'Infinity',
        '-Infinity',
        '1.5',
        '1e3',
        '0x10',
        ' 1',
        '-1',
        '9223372036854775808',
        '99999999999999999999',
      ].map((time) => [time, ALERT_ID]),
      [now, 'alrt_x'],
      [now, `sub_${'0'.repeat(32)}`],
      [now, `${ALERT_ID}'--`],
    ];
    for (const key of forged) {
      await expectInvalidCursor(
        `/api/v1/alerts?cursor=${cursorOf(key)}`,
        world.consumerToken,
        JSON.stringify(key),
      );
    }
  });

  it('a cursor the list itself handed out still pages (alerts: time and id)', async () => {
    const globex = await h.zekt.store.db
      .selectFrom('accounts')
      .select('account_id')
      .where('login', '=', 'globex')
      .executeTakeFirstOrThrow();
    for (const subject of ['sub_a', 'sub_b', 'sub_c']) {
      await h.zekt.alerts.raise({
        accountId: Number(globex.account_id),
        kind: 'connection.warning',
        subject,
        data: {},
      });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await h.call('GET', `/api/v1/alerts?limit=2${cursor ? `&cursor=${cursor}` : ''}`, {
        token: world.consumerToken,
      });
      expect(page.status).toBe(200);
      seen.push(...page.body.alerts.map((a: { id: string }) => a.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(3);
    expect(new Set(seen).size).toBe(3);
  });
});
