import { createHmac } from 'node:crypto';
import { Agent, request } from 'node:http';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

/**
 * The load of `zekt bench --compare`: signed `workflow_run.completed` webhooks sent over a fixed
 * number of keep-alive connections, from a worker thread of its own so that the sender never
 * waits for the simulator (which answers the targets' dispatches on the main thread) and the
 * other way round. Every body is built and signed before the clock starts.
 *
 * Two shapes: `closed` keeps every connection busy (maximum throughput: each connection sends its
 * next webhook when the previous one was answered); `open` starts webhooks on a fixed schedule
 * whatever the answers, like GitHub does, and times each from its scheduled start, so queueing in
 * front of a slow target counts against it (no coordinated omission).
 */
export interface WebhookLoadOptions {
  /** `http://127.0.0.1:port/path` */
  url: string;
  secret: string;
  /** Headers every webhook carries besides the signature and delivery id (X-GitHub-Hook-ID, …). */
  headers: Record<string, string>;
  /** A `workflow_run.completed` payload; `workflow_run.id` is replaced by each run id. */
  template: Record<string, unknown>;
  firstRunId: number;
  count: number;
  connections: number;
  /** Webhooks started per second; 0: closed loop. */
  rate: number;
}

export interface WebhookTiming {
  runId: number;
  /** Epoch milliseconds (fractional): when the webhook was due to be sent, and when it was answered. */
  sentAt: number;
  answeredAt: number;
  status: number;
}

export interface WebhookLoadResult {
  timings: WebhookTiming[];
  bodyBytes: number;
}

/** Epoch milliseconds with sub-millisecond precision, comparable across threads and processes. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Where an open-loop webhook's latency starts: when it was due, so that a sender that fell behind
 * (its thread waiting for a core the target holds) counts against the target, as wrk2 counts it;
 * or when it left, if the timer let it go a little early. The earlier of the two. Until 29 November
 * it was the later, which did the opposite on both counts: the lag was not counted, and a webhook
 * answered before it was due had a negative latency.
 */
export function timedFrom(due: number, leftAt: number): number {
  return Math.min(due, leftAt);
}

/** Runs the load in a worker thread; resolves when every webhook was answered (or failed). */
export function runWebhookLoad(options: WebhookLoadOptions): Promise<WebhookLoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: options });
    worker.once('message', (result: WebhookLoadResult) => resolve(result));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the load generator exited with ${code}`));
    });
  });
}

function buildRequests(
  options: WebhookLoadOptions,
): Array<{ runId: number; body: Buffer; signature: string }> {
  const payload = structuredClone(options.template) as { workflow_run: Record<string, unknown> };
  const requests = [];
  for (let i = 0; i < options.count; i++) {
    const runId = options.firstRunId + i;
    payload.workflow_run.id = runId;
    const body = Buffer.from(JSON.stringify(payload));
    const signature = `sha256=${createHmac('sha256', options.secret).update(body).digest('hex')}`;
    requests.push({ runId, body, signature });
  }
  return requests;
}

async function generate(options: WebhookLoadOptions): Promise<WebhookLoadResult> {
  const requests = buildRequests(options);
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const target = new URL(options.url);
  const send = (item: (typeof requests)[number], sentAt: number): Promise<WebhookTiming> =>
    new Promise((resolve) => {
      const req = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: {
            ...options.headers,
            'content-type': 'application/json',
            'content-length': item.body.length,
            'x-github-event': 'workflow_run',
            'x-github-delivery': `bench-${item.runId}`,
            'x-hub-signature-256': item.signature,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({ runId: item.runId, sentAt, answeredAt: preciseNow(), status: res.statusCode ?? 0 }),
          );
        },
      );
      req.on('error', () => resolve({ runId: item.runId, sentAt, answeredAt: preciseNow(), status: 0 }));
      req.end(item.body);
    });

  const timings: WebhookTiming[] = [];
  if (options.rate <= 0) {
    let next = 0;
    const lane = async () => {
      while (next < requests.length) {
        const item = requests[next++] as (typeof requests)[number];
        timings.push(await send(item, preciseNow()));
      }
    };
    await Promise.all(Array.from({ length: options.connections }, lane));
  } else {
    const started = preciseNow();
    const pending: Array<Promise<void>> = [];
    for (let i = 0; i < requests.length; i++) {
      const due = started + (i * 1000) / options.rate;
      const wait = due - preciseNow();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      const sentAt = timedFrom(due, preciseNow());
      pending.push(send(requests[i] as (typeof requests)[number], sentAt).then((t) => void timings.push(t)));
    }
    await Promise.all(pending);
  }
  agent.destroy();
  return { timings, bodyBytes: requests[0]?.body.length ?? 0 };
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  generate(workerData as WebhookLoadOptions).then(
    (result) => port.postMessage(result),
    (error: unknown) => {
      throw error;
    },
  );
}
