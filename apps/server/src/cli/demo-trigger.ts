import { readFileSync } from 'node:fs';
import type { Environment } from '../config.js';
import { CliError } from './cli-error.js';
import type { DemoState } from './demo-seed.js';
import { demoStatePath } from './dev-paths.js';
import { type Answer, createZektClient, ok } from './zekt-client.js';

/**
 * `zekt demo-trigger [payload]`: asks the simulator to run the demo provider workflow — the message
 * step posts `payload` to Zekt, then GitHub sends `workflow_run.completed` — and waits until the
 * simulator records the `repository_dispatch` Zekt sends to the consumer repository.
 */
export async function runDemoTrigger(input: {
  env: Environment;
  payload: string | undefined;
  timeoutMs?: number;
}): Promise<number> {
  let demo: DemoState;
  try {
    demo = JSON.parse(readFileSync(demoStatePath(input.env), 'utf8')) as DemoState;
  } catch {
    throw new CliError('no demo is running: start it with `npm start` (zekt dev) first');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(input.payload ?? '{"version":"1.2.3"}');
  } catch (error) {
    throw new CliError(`the payload must be JSON: ${(error as Error).message}`);
  }
  const sim = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(demo.simUrl + path, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok)
      throw new CliError(`the simulator answered ${method} ${path} with ${response.status}: ${text}`);
    return JSON.parse(text) as unknown;
  };
  const dispatchesPath = `/_sim/dispatches?repository=${encodeURIComponent(demo.consumer.repository)}`;
  const before = ((await sim('GET', dispatchesPath)) as unknown[]).length;

  const run = (await sim('POST', `/_sim/repos/${demo.provider.repository}/runs`, {
    workflow: demo.provider.workflow,
    name: demo.provider.workflowName,
    message: { zektUrl: demo.zektUrl, eventType: demo.eventType, payload },
  })) as { run: { id: number }; message: { status: number; body: unknown } | null };
  process.stdout.write(`provider run ${run.run.id} of ${demo.provider.repository} completed\n`);
  process.stdout.write(`message step: HTTP ${run.message?.status} ${JSON.stringify(run.message?.body)}\n`);

  const timeoutMs = input.timeoutMs ?? 15_000;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const dispatches = (await sim('GET', dispatchesPath)) as Array<{
      clientPayload: { zekt?: { payload?: unknown; deliveryId?: string } };
    }>;
    if (dispatches.length > before) {
      const dispatch = dispatches[dispatches.length - 1]!;
      process.stdout.write(
        `repository_dispatch received by ${demo.consumer.repository}:\n${JSON.stringify(dispatch, null, 2)}\n`,
      );
      const same = JSON.stringify(dispatch.clientPayload.zekt?.payload) === JSON.stringify(payload);
      process.stdout.write(
        same
          ? 'client_payload.zekt.payload equals the message.\n'
          : 'client_payload.zekt.payload differs from the message!\n',
      );
      const deliveryId = dispatch.clientPayload.zekt?.deliveryId;
      if (deliveryId) await reportRecord(demo, deliveryId, deadline);
      return same ? 0 : 1;
    }
    // No dispatch arrived: GitHub may have refused it, and then waiting longer shows nothing new.
    const failed = (await deliveriesOfRun(demo, run.run.id)).find((d) => d.deliveryStatus === 'Failed');
    if (failed) {
      process.stdout.write(describeFailure(await deliveryRecord(demo, failed.deliveryId)));
      return 1;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const pending = await deliveriesOfRun(demo, run.run.id);
  throw new CliError(
    pending.length === 0
      ? `no repository_dispatch reached ${demo.consumer.repository} within ${timeoutMs / 1000} s and Zekt recorded no delivery for run ${run.run.id}: the run was not routed (see the zekt dev output)`
      : `no repository_dispatch reached ${demo.consumer.repository} within ${timeoutMs / 1000} s; Zekt is still trying: ${pending
          .map((d) => `delivery ${d.deliveryId} ${d.deliveryStatus}, ${d.retryNumber} failed attempt(s)`)
          .join('; ')} (npx zekt deliveries show <id> --token <alice's token>)`,
  );
}

type DeliverySummary = Answer<'/api/v1/deliveries', 'get'>['deliveries'][number];
type DeliveryRecord = Answer<'/api/v1/deliveries/{deliveryId}', 'get'>;

/** The management API as the demo's provider (alice) calls it. */
function providerClient(demo: DemoState) {
  return createZektClient({ baseUrl: demo.zektUrl, token: demo.tokens.provider });
}

/** The delivery records Zekt made for one provider run (its correlation id), as the provider sees them. */
async function deliveriesOfRun(demo: DemoState, runId: number): Promise<DeliverySummary[]> {
  const page = await ok(
    providerClient(demo).GET('/api/v1/deliveries', { params: { query: { runId: String(runId) } } }),
  );
  return page.deliveries;
}

async function deliveryRecord(demo: DemoState, deliveryId: string): Promise<DeliveryRecord> {
  return ok(
    providerClient(demo).GET('/api/v1/deliveries/{deliveryId}', { params: { path: { deliveryId } } }),
  );
}

/** A Failed record as the user needs it: why, and what GitHub answered to the last attempt. */
function describeFailure(record: DeliveryRecord): string {
  const last = record.attempts?.at(-1);
  const answer = last
    ? `; GitHub answered attempt ${last.number} with ${last.status ?? 'no response'}${last.category ? ` (${last.category})` : ''}${last.message ? `: ${last.message}` : ''}`
    : '';
  return `delivery record: Failed (${record.failureReason ?? 'no reason recorded'})${answer}; see GET /api/v1/deliveries/${record.deliveryId}\n`;
}

/** Follows the durable delivery record until the consumer's workflow has finished with it. */
async function reportRecord(demo: DemoState, deliveryId: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const record = await deliveryRecord(demo, deliveryId);
    if (record.isFinalized) {
      process.stdout.write(
        `delivery record: ${String(record.deliveryStatus)} (dispatched ${String(record.dispatchedAt)}, confirmed ${String(record.confirmedAt)}, completed ${String(record.completedAt)}); see GET /api/v1/deliveries/${deliveryId}\n`,
      );
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  process.stdout.write(`delivery ${deliveryId} was not completed by the consumer workflow in time\n`);
}
