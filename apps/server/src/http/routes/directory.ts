import Type from 'typebox';
import { listDirectory } from '../../store/services.js';
import type { App, AppContext } from '../app.js';
import { MANAGEMENT_SECURITY, requireCaller } from '../authenticate.js';
import { serviceView } from '../views.js';
import { accountLogins, repositoryNames } from './lookups.js';

/** The directory: published services a consumer may request access to. */
export function registerDirectoryRoutes(api: App, context: AppContext): void {
  api.get(
    '/api/v1/directory',
    {
      schema: {
        summary: 'Published services visible to the caller',
        tags: ['services'],
        security: MANAGEMENT_SECURITY,
        querystring: Type.Object({
          q: Type.Optional(Type.String({ maxLength: 200 })),
          tag: Type.Optional(Type.String({ maxLength: 40 })),
        }),
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const services = await listDirectory(context.store.db, {
        memberAccountIds: caller.accounts.map((a) => Number(a.account_id)),
        q: request.query.q,
        tag: request.query.tag,
      });
      const logins = await accountLogins(
        context.store.db,
        services.map((s) => Number(s.account_id)),
      );
      const repositories = await repositoryNames(
        context.store.db,
        services.map((s) => Number(s.repository_id)),
      );
      return {
        services: services.map((service) => {
          const {
            published: _published,
            createdAt: _c,
            updatedAt: _u,
            ...listed
          } = serviceView(service, {
            provider: logins.get(Number(service.account_id)) ?? '',
            repository: repositories.get(Number(service.repository_id)) ?? '',
          });
          return listed;
        }),
      };
    },
  );
}
