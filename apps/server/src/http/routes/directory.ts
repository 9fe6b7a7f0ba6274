import Type from 'typebox';
import { listDirectory } from '../../store/services.js';
import { AUTH_PROBLEMS, DirectoryPageSchema, problems } from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { MANAGEMENT_SECURITY, requireCaller } from '../authenticate.js';
import { CURSOR_FIELDS, PageQuery, pageOf, readPage } from '../pagination.js';
import { serviceViews } from './services.js';

/** The directory: published services a consumer may request access to. */
export function registerDirectoryRoutes(api: App, context: Pick<AppContext, 'store'>): void {
  api.get(
    '/api/v1/directory',
    {
      schema: {
        summary: 'Published services visible to the caller',
        tags: ['services'],
        security: MANAGEMENT_SECURITY,
        querystring: Type.Object({
          q: Type.Optional(
            Type.String({ maxLength: 200, description: 'words in the slug, description or tags' }),
          ),
          tag: Type.Optional(Type.String({ maxLength: 40, description: 'services with this tag' })),
          ...PageQuery,
        }),
        response: { 200: DirectoryPageSchema, ...problems(AUTH_PROBLEMS, 'invalid_cursor') },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const { limit, store } = readPage(request.query, [CURSOR_FIELDS.name, CURSOR_FIELDS.id('svc')]);
      const rows = await listDirectory(
        context.store.db,
        {
          memberAccountIds: caller.accounts.map((a) => a.account_id),
          q: request.query.q,
          tag: request.query.tag,
        },
        store,
      );
      const page = pageOf(rows, limit, (s) => [s.slug, s.service_id]);
      // The response schema leaves out what only the provider sees (published, times).
      return { services: await serviceViews(context.store.db, page.items), nextCursor: page.nextCursor };
    },
  );
}
