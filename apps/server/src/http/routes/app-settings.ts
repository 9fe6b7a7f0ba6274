import { AppSettingsSchema, AUTH_PROBLEMS, problems } from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { MANAGEMENT_SECURITY, requireCaller } from '../authenticate.js';
import { HttpError } from '../problem.js';
import { iso } from '../views.js';

/**
 * `GET /api/v1/app`: the GitHub App this Zekt acts as and where its credentials come from (the
 * environment, or registered through setup), for the console's Settings. Never a secret.
 */
export function registerAppSettingsRoute(
  api: App,
  context: Pick<AppContext, 'appCredentials' | 'github' | 'githubWebUrl'>,
): void {
  api.get(
    '/api/v1/app',
    {
      schema: {
        summary: 'The GitHub App in use and the source of its credentials',
        tags: ['setup'],
        security: MANAGEMENT_SECURITY,
        response: { 200: AppSettingsSchema, ...problems(AUTH_PROBLEMS, 'setup_required') },
      },
    },
    async (request) => {
      requireCaller(request);
      const app = await context.appCredentials.get({ fresh: true });
      if (app === null) {
        throw new HttpError('setup_required', 'no GitHub App is configured yet: register one at /setup');
      }
      return {
        source: app.source,
        appId: app.appId,
        slug: app.slug,
        name: app.name,
        owner: app.owner,
        htmlUrl: app.htmlUrl,
        installUrl:
          app.slug === null
            ? await context.github.appInstallUrl()
            : `${context.githubWebUrl}/apps/${app.slug}/installations/new`,
        registeredAt: iso(app.registeredAt),
      };
    },
  );
}
