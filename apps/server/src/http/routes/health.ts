import { sql } from 'kysely';
import type { App, AppContext } from '../app-context.js';
import { HttpError } from '../problem.js';

/**
 * Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the store answers too, and
 * nothing else keeps the process from working, such as an App key GitHub refused at start).
 */
export function registerHealthRoutes(app: App, context: Pick<AppContext, 'store' | 'notReadyReason'>): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async () => {
    try {
      await sql`select 1`.execute(context.store.db);
    } catch (error) {
      throw new HttpError('store_unavailable', 'the database does not answer', {}, { cause: error });
    }
    const reason = context.notReadyReason();
    if (reason !== null) throw new HttpError('not_ready', reason);
    return { status: 'ready' };
  });
}
