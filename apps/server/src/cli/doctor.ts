import { type Config, ConfigError, type Environment, loadConfig, loadStoreConfig } from '../config.js';
import { anyFailed, type CheckResult, judgeServiceChecks } from '../domain/service-checks.js';
import { environmentAppCredentials, resolveAppCredentials } from '../setup/app-credentials.js';
import { type AppCredentials, setupUrlOf } from '../startup/app-credentials.js';
import { openExistingStore } from '../startup/existing-store.js';
import { gatherServiceFacts } from '../startup/service-facts.js';

/**
 * `zekt doctor`: every check, from the same environment `zekt serve` reads, printed ✔ / ✘ / – with
 * the fix under each failure (or as JSON). Exit code 1 when a check failed, 0 otherwise. It only
 * reads: it never creates or migrates the store, and probes the alert URL without sending an alert.
 */
export async function runDoctor(options: {
  env: Environment;
  json: boolean;
  write: (text: string) => void;
}): Promise<number> {
  let config: Config | null = null;
  let problems: string[] = [];
  try {
    config = loadConfig(options.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems = error.problems;
  }
  let database: Config['database'] | null = config?.database ?? null;
  if (database === null) {
    try {
      database = loadStoreConfig(options.env);
    } catch {
      database = null;
    }
  }
  // The App registered through setup lives in the store: read it there when the store opens (the
  // database check below says why when it does not), else only the environment's App is known.
  const store = database && config ? await openExistingStore(database).catch(() => undefined) : undefined;
  let credentials: AppCredentials | null = null;
  if (config) {
    try {
      credentials = store
        ? await resolveAppCredentials({ store, config })
        : environmentAppCredentials(config);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems = [...problems, ...error.problems];
    }
  }
  const facts = await gatherServiceFacts({
    configurationProblems: problems,
    database,
    ...(store ? { store } : {}),
    github: config && {
      apiUrl: config.github.apiUrl,
      credentials,
      setupUrl: setupUrlOf(config.baseUrl),
    },
    webhookUrl: config ? `${config.baseUrl}/webhooks/github` : '',
    oidcIssuer: config?.oidc.issuer ?? null,
    alertUrl: config?.alerts.url ?? null,
  }).finally(() => store?.close().catch(() => undefined));
  const checks = judgeServiceChecks(facts, { kind: 'operator' });
  const ok = !anyFailed(checks);
  options.write(
    options.json
      ? `${JSON.stringify({ ok, checkedAt: new Date(facts.checkedAt).toISOString(), checks }, null, 2)}\n`
      : formatChecks(checks),
  );
  return ok ? 0 : 1;
}

const MARKS = { passed: '✔', failed: '✘', skipped: '–' } as const;

/** One line per check, its fix indented under a failure, and a closing count. */
export function formatChecks(checks: CheckResult[]): string {
  const width = Math.max(...checks.map((c) => c.title.length));
  const lines = checks.flatMap((check) => [
    `${MARKS[check.status]} ${check.title.padEnd(width)}  ${check.status === 'skipped' ? `skipped: ${check.summary}` : check.summary}`,
    ...(check.status === 'failed' && check.fix ? [`  ${' '.repeat(width)}  fix: ${check.fix}`] : []),
  ]);
  const failed = checks.filter((c) => c.status === 'failed').length;
  lines.push(
    '',
    failed === 0
      ? 'no check failed'
      : `${failed} check${failed === 1 ? '' : 's'} failed: fix them from the top`,
  );
  return `${lines.join('\n')}\n`;
}
