import type { Logger } from 'pino';
import type { Mode } from '../config.js';
import {
  type AppVerdict,
  appVerdict,
  judgeApp,
  judgeClock,
  MAX_CLOCK_SKEW_MS,
} from '../domain/service-checks.js';
import { createAppProbe } from '../github/app-probe.js';
import type { AppCredentials } from './app-credentials.js';
import { OperatorError } from './operator-error.js';

/**
 * The start-up check of `zekt serve`: GitHub is asked `GET /app` with the App's token before the
 * server listens.
 * - GitHub refuses the key or the App id (or the key cannot sign): in production Zekt refuses to
 *   start (an `OperatorError`, exit 2); elsewhere it starts and `/readyz` fails with the reason.
 * - GitHub does not answer (network, outage, 5xx, rate limit): not the operator's mistake; Zekt
 *   starts, `/readyz` stays ready (failing it would take every process out of its load balancer
 *   for an outage of GitHub's, while webhooks and messages still arrive), and the check is asked
 *   again every `retryMs` until GitHub answers. A refusal found then fails `/readyz`.
 * - GitHub has not answered after `waitMs`: the start goes on, and the answer counts when it comes
 *   (a refusal then fails `/readyz`, in production too: the process already serves).
 */
export interface AppVerification {
  /** Why this process is not ready, or null. */
  notReadyReason(): string | null;
  stop(): void;
}

export interface AppVerificationOptions {
  credentials: AppCredentials | null;
  apiUrl: string;
  mode: Mode;
  logger: Logger;
  /** How long to wait before asking an unreachable GitHub again (default 30 s). */
  retryMs?: number;
  /** How long the start waits for GitHub's first answer (default 5 s). */
  waitMs?: number;
  timeoutMs?: number;
}

export const APP_CHECK_RETRY_MS = 30_000;
export const APP_CHECK_WAIT_MS = 5_000;

export async function verifyAppAtStart(options: AppVerificationOptions): Promise<AppVerification> {
  // Setup mode: there is nothing to verify yet; setup itself says why the process is not ready.
  const credentials = options.credentials;
  if (credentials === null) return { notReadyReason: () => null, stop: () => undefined };
  const probe = createAppProbe({
    apiUrl: options.apiUrl,
    appId: credentials.appId,
    privateKey: credentials.privateKey,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  let reason: string | null = null;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const check = async (): Promise<{ verdict: AppVerdict; summary: string; fix: string }> => {
    const answer = await probe.get('/app');
    const verdict = appVerdict(answer);
    const judged = judgeApp(answer, credentials.appId, credentials.source, options.apiUrl);
    const fix = judged.fix ?? '';
    const line = `${judged.summary}; ${fix}`;
    if (verdict === 'refused') {
      reason = line;
      options.logger.error({ check: 'app' }, line);
    } else if (verdict === 'unavailable') {
      options.logger.warn(
        { check: 'app', retryInMs: options.retryMs ?? APP_CHECK_RETRY_MS },
        `the App credentials are not verified yet: ${line}`,
      );
    } else {
      reason = null;
      options.logger.info({ check: 'app' }, judged.summary);
    }
    const skewMs = answer.skewMs ?? null;
    if (skewMs !== null && Math.abs(skewMs) > MAX_CLOCK_SKEW_MS) {
      const clock = judgeClock(skewMs);
      options.logger.warn({ check: 'clock' }, `${clock.summary}; ${clock.fix}`);
    }
    return { verdict, summary: judged.summary, fix };
  };

  const retry = () => {
    timer = setTimeout(() => {
      void check().then(
        ({ verdict }) => {
          if (verdict === 'unavailable' && !stopped) retry();
        },
        () => !stopped && retry(),
      );
    }, options.retryMs ?? APP_CHECK_RETRY_MS);
    timer.unref();
  };

  const asked = check();
  let waited: NodeJS.Timeout | undefined;
  const first = await Promise.race([
    asked,
    new Promise<null>((resolve) => {
      waited = setTimeout(() => resolve(null), options.waitMs ?? APP_CHECK_WAIT_MS);
    }),
  ]);
  clearTimeout(waited);
  if (first === null) {
    // A GitHub that is slow to answer (or a name that takes long to resolve) does not hold the
    // start back; its answer, when it comes, still decides readiness.
    options.logger.warn(
      { check: 'app' },
      `GitHub has not answered GET /app within ${(options.waitMs ?? APP_CHECK_WAIT_MS) / 1000} s: starting without waiting`,
    );
    void asked.then(
      ({ verdict }) => verdict === 'unavailable' && !stopped && retry(),
      () => !stopped && retry(),
    );
  } else if (first.verdict === 'refused' && options.mode === 'production') {
    throw new OperatorError(first.summary, first.fix);
  } else if (first.verdict === 'unavailable') {
    retry();
  }
  return {
    notReadyReason: () => reason,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
