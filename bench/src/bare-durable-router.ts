import { createSign } from 'node:crypto';
import { Agent, createServer, request, type Server } from 'node:http';
import Database from 'better-sqlite3';
import { signedWith } from './ceiling-server.js';
import { type CompletedRun, runClientPayload } from './run-client-payload.js';

/**
 * The bare durable router of `zekt bench --compare`: the least a router that loses no acknowledged
 * event can do per webhook on this machine, written for that and nothing else, so that Zekt's
 * durable targets can be read against what durability itself costs here.
 *
 * - `node:http`; the body read whole, its HMAC-SHA256 checked in constant time (the ceiling's
 *   work), then parsed;
 * - the event (deduplicated by its run id) and one delivery per consumer written to SQLite with
 *   Zekt's embedded store's settings (WAL, `synchronous = FULL`), the writes of one turn of the
 *   event loop in one transaction, and the webhook answered 202 only once that COMMIT returned;
 * - then each delivery dispatched as `repository_dispatch` with an installation token (fetched
 *   once per installation, refreshed before it expires) over keep-alive connections, as many at
 *   once as there are deliveries, and marked sent or failed in a later group commit.
 *
 * What it leaves out is all the rest of what Zekt does: retries and the lease that lets a restart
 * finish what a crash left, pacing and per-tenant caps, policy, accounts, archives, the message
 * join, logs, metrics, traces, the API. A delivery stranded by a crash stays `pending` in the file
 * (its partial index is what a recovery pass would read); nothing here sends it again.
 */
export interface BareDurableRouterOptions {
  /** Directory of the SQLite file (created by the caller, removed by it). */
  dataDir: string;
  appId: number;
  privateKey: string;
  webhookSecret: string;
  apiUrl: string;
  eventType: string;
  consumers: Array<{ installationId: number; owner: string; repo: string }>;
}

interface Delivery {
  id: number;
  consumer: BareDurableRouterOptions['consumers'][number];
  payload: string;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL UNIQUE,
    repository TEXT NOT NULL,
    dispatch_body TEXT NOT NULL,
    received_at INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS deliveries (
    id INTEGER PRIMARY KEY,
    event_id INTEGER NOT NULL REFERENCES events (id),
    consumer TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS deliveries_pending ON deliveries (id) WHERE state = 'pending';
`;

/** Listens at `/webhooks/github`. */
export function createBareDurableRouter(options: BareDurableRouterOptions): Server {
  const db = new Database(`${options.dataDir}/bare.db`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(SCHEMA);
  const insertEvent = db.prepare<[number, string, string, number], { id: number }>(
    'INSERT INTO events (run_id, repository, dispatch_body, received_at) VALUES (?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING RETURNING id',
  );
  const insertDelivery = db.prepare<[number, string, number], { id: number }>(
    "INSERT INTO deliveries (event_id, consumer, state, attempts, updated_at) VALUES (?, ?, 'pending', 0, ?) RETURNING id",
  );
  const finishDelivery = db.prepare<[string, number, number]>(
    'UPDATE deliveries SET state = ?, attempts = attempts + 1, updated_at = ? WHERE id = ?',
  );
  const commits = groupCommit(db);
  const agent = new Agent({ keepAlive: true });
  const tokens = installationTokens(options, agent);

  function dispatch(delivery: Delivery): void {
    tokens
      .get(delivery.consumer.installationId)
      .then((token) =>
        post(
          agent,
          `${options.apiUrl}/repos/${delivery.consumer.owner}/${delivery.consumer.repo}/dispatches`,
          {
            token,
            body: delivery.payload,
          },
        ),
      )
      .then(
        (answer) => answer.status === 204,
        () => false,
      )
      .then((sent) => {
        commits
          .write(() => finishDelivery.run(sent ? 'sent' : 'failed', Date.now(), delivery.id))
          .catch(() => {});
      });
  }

  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (!signedWith(options.webhookSecret, body, req.headers['x-hub-signature-256'])) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"outcome":"unauthorized"}');
        return;
      }
      let payload: CompletedRun;
      try {
        payload = JSON.parse(body.toString('utf8')) as CompletedRun;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"outcome":"malformed"}');
        return;
      }
      const run = payload.workflow_run;
      const clientPayload = JSON.stringify({
        event_type: options.eventType,
        client_payload: runClientPayload(payload),
      });
      commits
        .write(() => {
          const now = Date.now();
          const event = insertEvent.get(run.id, payload.repository.full_name, clientPayload, now);
          if (event === undefined) return [];
          return options.consumers.map((consumer) => ({
            id: (insertDelivery.get(event.id, `${consumer.owner}/${consumer.repo}`, now) as { id: number })
              .id,
            consumer,
            payload: clientPayload,
          }));
        })
        .then(
          (deliveries) => {
            const duplicate = deliveries.length === 0 && options.consumers.length > 0;
            res
              .writeHead(duplicate ? 200 : 202, { 'content-type': 'application/json' })
              .end(duplicate ? '{"outcome":"duplicate"}' : '{"outcome":"accepted"}');
            for (const delivery of deliveries) dispatch(delivery);
          },
          () => {
            res.writeHead(503, { 'content-type': 'application/json' }).end('{"outcome":"error"}');
          },
        );
    });
  }).on('close', () => db.close());
}

/**
 * Writes made during one turn of the event loop run in one transaction; each caller's promise
 * settles once that transaction has committed (or failed, and then every caller's fails).
 */
function groupCommit(db: Database.Database): { write<T>(apply: () => T): Promise<T> } {
  let queue: Array<{
    apply: () => unknown;
    resolve: (value: unknown) => void;
    reject: (error: unknown) => void;
  }> = [];
  const commit = () => {
    const batch = queue;
    queue = [];
    let results: unknown[];
    try {
      results = db.transaction(() => batch.map((w) => w.apply()))();
    } catch (error) {
      for (const w of batch) w.reject(error);
      return;
    }
    batch.forEach((w, i) => {
      w.resolve(results[i]);
    });
  };
  return {
    write<T>(apply: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        if (queue.length === 0) setImmediate(commit);
        queue.push({ apply, resolve: resolve as (value: unknown) => void, reject });
      });
    },
  };
}

/** Installation tokens from the App's JWT, each kept until five minutes before it expires. */
function installationTokens(
  options: Pick<BareDurableRouterOptions, 'appId' | 'privateKey' | 'apiUrl'>,
  agent: Agent,
) {
  const held = new Map<number, { token: string; expiresAt: number }>();
  const fetching = new Map<number, Promise<string>>();
  const appJwt = () => {
    const now = Math.floor(Date.now() / 1000);
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const unsigned = `${part({ alg: 'RS256', typ: 'JWT' })}.${part({ iat: now - 60, exp: now + 540, iss: String(options.appId) })}`;
    return `${unsigned}.${createSign('RSA-SHA256').update(unsigned).sign(options.privateKey, 'base64url')}`;
  };
  const fetchToken = async (installationId: number): Promise<string> => {
    const url = `${options.apiUrl}/app/installations/${installationId}/access_tokens`;
    const answer = await post(agent, url, { token: appJwt(), body: '{}' });
    if (answer.status !== 201) throw new Error(`POST ${url} answered ${answer.status}: ${answer.text}`);
    const { token, expires_at } = JSON.parse(answer.text) as { token: string; expires_at: string };
    held.set(installationId, { token, expiresAt: Date.parse(expires_at) });
    return token;
  };
  return {
    get(installationId: number): Promise<string> {
      const token = held.get(installationId);
      if (token !== undefined && token.expiresAt > Date.now() + 300_000) return Promise.resolve(token.token);
      let fetched = fetching.get(installationId);
      if (fetched === undefined) {
        fetched = fetchToken(installationId).finally(() => fetching.delete(installationId));
        fetching.set(installationId, fetched);
      }
      return fetched;
    },
  };
}

const GITHUB_HEADERS = {
  accept: 'application/vnd.github+json',
  'content-type': 'application/json',
  'user-agent': 'zekt-bench-bare-durable',
  'x-github-api-version': '2022-11-28',
};

/** POSTs `body`; resolves once the answer was read to its end. */
function post(
  agent: Agent,
  url: string,
  input: { token: string; body: string },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      agent,
      headers: {
        ...GITHUB_HEADERS,
        authorization: `Bearer ${input.token}`,
        'content-length': Buffer.byteLength(input.body),
      },
    });
    req.once('error', reject);
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('error', reject);
      res.once('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.end(input.body);
  });
}
