import { AUTH_PROBLEMS, MeSchema, problems } from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { MANAGEMENT_SECURITY, requireCaller } from '../authenticate.js';
import { accountView } from '../views.js';

export function registerMeRoutes(api: App, context: Pick<AppContext, 'github'>): void {
  api.get(
    '/api/v1/me',
    {
      schema: {
        summary: 'The caller, the accounts they may act for, and where to install the App',
        tags: ['accounts'],
        security: MANAGEMENT_SECURITY,
        response: { 200: MeSchema, ...problems(AUTH_PROBLEMS) },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      return {
        user: {
          login: caller.user.login,
          id: caller.user.github_id,
        },
        accounts: caller.accounts.map(accountView),
        installUrl: await context.github.appInstallUrl(),
      };
    },
  );
}
