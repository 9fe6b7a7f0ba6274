import type { App } from '../app.js';
import { MANAGEMENT_SECURITY, requireCaller } from '../authenticate.js';
import { accountView } from '../views.js';

export function registerMeRoutes(api: App): void {
  api.get(
    '/api/v1/me',
    {
      schema: {
        summary: 'The caller and the accounts they may act for',
        tags: ['accounts'],
        security: MANAGEMENT_SECURITY,
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      return {
        user: {
          login: caller.user.login,
          id: caller.user.github_id === null ? null : Number(caller.user.github_id),
        },
        accounts: caller.accounts.map(accountView),
      };
    },
  );
}
