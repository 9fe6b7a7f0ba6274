import { sql } from 'kysely';
import type { App, AppContext } from '../app-context.js';
import { HttpError } from '../problem.js';

/**
 * Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the store answers too, and
 * a GitHub App is configured — in setup mode the process is alive but cannot do its work yet — and
 * nothing else keeps the process from working, such as an App key GitHub refused at start).
 */
export function registerHealthRoutes(
  app: App,
  context: Pick<AppContext, 'store' | 'notReadyReason' | 'appCredentials'>,
): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async () => {
    try {
      await sql`select 1`.execute(context.store.db);
    } catch (error) {
      throw new HttpError('store_unavailable', 'the database does not answer', {}, { cause: error });
    }
    if ((await context.appCredentials.get({ fresh: true })) === null) {
      throw new HttpError(
        'setup_required',
        'no GitHub App is configured (setup mode): register one at /setup with the setup code `zekt serve` printed (`zekt setup` prints it again), or set GITHUB_APP_ID, GITHUB_PRIVATE_KEY and GITHUB_WEBHOOK_SECRET',
      );
    }
    const reason = context.notReadyReason();
    if (reason !== null) throw new HttpError('not_ready', reason);
    return { status: 'ready' };
  });
}
