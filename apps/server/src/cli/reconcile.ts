import { pino } from 'pino';
import type { Config } from '../config.js';
import { MAX_REDELIVERY_ASKS } from '../domain/reconcile.js';
import { createGitHubClient } from '../github/github-client.js';
import { createReconciler, type ReconcileReport } from '../reconcile/reconciler.js';
import { resolveAppCredentials } from '../setup/app-credentials.js';
import { openStore } from '../store/store.js';
import { CliError } from './cli-error.js';

/**
 * `zekt reconcile`: one reconciler pass on demand, against the store and GitHub App
 * of the configuration, printing what it found, asked for and recovered. Exits 1 when GitHub
 * refused a webhook's calls (the report says which and why) or a redelivery was given up, else 0.
 */
export async function runReconcile(input: {
  config: Config;
  /** How long to wait for the redeliveries asked for to arrive. */
  waitForRecoveryMs: number;
  json: boolean;
  write: (text: string) => void;
}): Promise<number> {
  const store = await openStore(input.config.database);
  try {
    await store.migrate();
    const app = await resolveAppCredentials({ store, config: input.config });
    if (app === null) {
      throw new CliError(
        'zekt reconcile: no GitHub App is configured yet; register one through setup (`zekt setup` prints the URL) or set GITHUB_APP_ID, GITHUB_PRIVATE_KEY and GITHUB_WEBHOOK_SECRET',
      );
    }
    const reconciler = createReconciler({
      store,
      clock: { now: () => Date.now() },
      github: createGitHubClient({
        appId: app.appId,
        privateKey: app.privateKey,
        apiUrl: input.config.github.apiUrl,
      }),
      // The report is the output; the log would only repeat it.
      logger: pino({ level: 'silent' }),
      owner: `zekt-reconcile-${process.pid}`,
    });
    const report = await reconciler.reconcile({
      waitForRecoveryMs: input.waitForRecoveryMs,
      leaseWaitMs: 60_000,
    });
    input.write(input.json ? `${JSON.stringify(report, null, 2)}\n` : formatReconcileReport(report));
    const attention = report.webhooks.some((w) => w.outcome !== 'checked') || report.gaveUp.length > 0;
    return !report.ran || attention ? 1 : 0;
  } finally {
    await store.close();
  }
}

/** The report as lines a person reads: one per webhook, then what was asked for and what arrived. */
export function formatReconcileReport(report: ReconcileReport): string {
  if (!report.ran) {
    return 'another Zekt process is reconciling and did not finish within a minute; try again later\n';
  }
  const lines: string[] = [];
  for (const check of report.webhooks) {
    if (check.problem !== undefined) {
      const doing = check.outcome === 'backing_off' ? 'left alone after GitHub refused' : 'GitHub refused';
      lines.push(
        `${check.webhook}: ${doing} (${check.problem.kind}): ${check.problem.message}; next try after ${check.problem.retryAt}`,
      );
    } else {
      lines.push(
        `${check.webhook}: ${check.listed} deliveries listed, ${check.failed} failed, ${check.requested} redelivery requested`,
      );
    }
  }
  const name = (r: { event: string; action: string | null; guid: string }) =>
    `${r.event}${r.action ? `.${r.action}` : ''} ${r.guid}`;
  for (const request of report.requested) {
    const again = request.ask > 1 ? `, ask ${request.ask} of ${MAX_REDELIVERY_ASKS}` : '';
    lines.push(`requested: ${name(request)} (${request.hook}${again})`);
  }
  for (const request of report.recovered) lines.push(`recovered: ${name(request)}`);
  for (const request of report.gaveUp) {
    lines.push(
      `gave up: ${name(request)} (${request.hook}) failed again after ${MAX_REDELIVERY_ASKS} redeliveries; redeliver it on GitHub once the cause is fixed`,
    );
  }
  const key = (r: { hook: string; guid: string }) => `${r.hook} ${r.guid}`;
  const recovered = new Set(report.recovered.map(key));
  const waiting = report.requested.filter((r) => !recovered.has(key(r))).length;
  lines.push(
    `${report.requested.length} redeliveries requested, ${report.recovered.length} recovered, ${waiting} not arrived yet`,
  );
  return `${lines.join('\n')}\n`;
}
