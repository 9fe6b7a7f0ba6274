import { anyFailed, judgeServiceChecks } from '../../domain/service-checks.js';
import { AUTH_PROBLEMS, problems } from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { MANAGEMENT_SECURITY, requireCaller } from '../authenticate.js';
import { HttpError } from '../problem.js';
import { ServiceChecksSchema } from '../settings-schemas.js';
import { isoAt } from '../views.js';

/**
 * `GET /api/v1/checks`: the checks of `zekt doctor` as the running server sees them, for members
 * (Settings in the console). Service-wide findings (database, App, clock, issuer, alert URL) are
 * the same for every member and name no secret (database and alert URLs appear without password
 * or path); findings about installations and webhook deliveries are limited to the caller's
 * accounts.
 */
export function registerServiceCheckRoutes(api: App, context: Pick<AppContext, 'serviceChecks'>): void {
  api.get(
    '/api/v1/checks',
    {
      schema: {
        summary:
          'The service checks of zekt doctor: database, App credentials, clock, webhooks, OIDC, alerts',
        tags: ['settings'],
        security: MANAGEMENT_SECURITY,
        response: { 200: ServiceChecksSchema, ...problems(AUTH_PROBLEMS, 'membership_required') },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      if (caller.accounts.length === 0) {
        throw new HttpError(
          'membership_required',
          'the service checks are shown to members of an account: install the Zekt GitHub App on one, or ask a member to add you, then log in again',
        );
      }
      const facts = await context.serviceChecks.facts();
      const checks = judgeServiceChecks(facts, {
        kind: 'member',
        installationIds: caller.accounts.flatMap((a) =>
          a.installation_id === null ? [] : [a.installation_id],
        ),
      });
      return { ok: !anyFailed(checks), checkedAt: isoAt(facts.checkedAt), checks };
    },
  );
}
