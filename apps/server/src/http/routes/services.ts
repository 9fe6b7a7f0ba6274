import type { Kysely } from 'kysely';
import Type from 'typebox';
import { serviceEdit } from '../../domain/audit.js';
import { DEFAULT_EVENT_TYPE, describeInvalidEventType, isValidEventType } from '../../domain/event-type.js';
import { toWorkflowPath } from '../../domain/workflow-path.js';
import { recordAudit } from '../../store/audit.js';
import type { Database, ServiceRow } from '../../store/schema.js';
import {
  createService,
  getService,
  getServiceBySlug,
  listServices,
  parseTags,
  updateService,
} from '../../store/services.js';
import { getWorkflow } from '../../store/workflows.js';
import { withinAccountCap } from '../account-caps.js';
import {
  AUTH_PROBLEMS,
  CHANGE_PROBLEMS,
  PATH_PROBLEMS,
  problems,
  ServicePageSchema,
  ServiceSchema,
} from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { auditActor } from '../audit-actor.js';
import {
  type Caller,
  isMemberOf,
  MANAGEMENT_SECURITY,
  memberAccount,
  requireCaller,
} from '../authenticate.js';
import { CURSOR_FIELDS, PageQuery, pageOf, readPage } from '../pagination.js';
import { HttpError } from '../problem.js';
import { serviceView } from '../views.js';
import { accountLogins, memberRepository, repositoryNames } from './lookups.js';

/** Services as the API shows them, with their provider's and repository's names. */
export async function serviceViews(db: Kysely<Database>, services: ServiceRow[]) {
  const [logins, names] = await Promise.all([
    accountLogins(
      db,
      services.map((s) => s.account_id),
    ),
    repositoryNames(
      db,
      services.map((s) => s.repository_id),
    ),
  ]);
  return services.map((service) =>
    serviceView(service, {
      provider: logins.get(service.account_id) ?? '',
      repository: names.get(service.repository_id) ?? '',
    }),
  );
}

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const Visibility = Type.Union([Type.Literal('public'), Type.Literal('organization')]);
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 40 }), { maxItems: 20 });
const security = MANAGEMENT_SECURITY;

const CreateService = Type.Object(
  {
    repository: Type.String({ description: 'owner/repo of an enabled provider repository' }),
    workflow: Type.String({ description: 'workflow file name (deploy.yml) or path; must be whitelisted' }),
    slug: Type.String({ description: 'lower-case letters, digits and dashes; unique per account' }),
    eventType: Type.Optional(
      Type.String({ description: `default event type (default ${DEFAULT_EVENT_TYPE})` }),
    ),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    tags: Type.Optional(Tags),
    visibility: Type.Optional(Visibility),
    published: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const UpdateService = Type.Object(
  {
    slug: Type.Optional(Type.String()),
    eventType: Type.Optional(Type.String()),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    tags: Type.Optional(Tags),
    visibility: Type.Optional(Visibility),
    published: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** Services: a provider publishes a whitelisted workflow for consumers. */
export function registerServiceRoutes(
  api: App,
  context: Pick<AppContext, 'store' | 'clock' | 'limits'>,
): void {
  const db = context.store.db;
  const views = (services: ServiceRow[]) => serviceViews(db, services);

  async function view(service: ServiceRow) {
    return (await views([service]))[0]!;
  }

  async function ownService(caller: Caller, serviceId: string): Promise<ServiceRow> {
    const service = await getService(db, serviceId);
    if (!service || !isMemberOf(caller, service.account_id)) {
      throw new HttpError('service_not_found', `no service ${serviceId} of an account you are a member of`);
    }
    return service;
  }

  async function checkSlug(accountId: number, slug: string, exceptServiceId?: string) {
    if (!SLUG.test(slug)) {
      throw new HttpError(
        'invalid_slug',
        'slug must be 1–63 lower-case letters, digits or dashes, starting with a letter or digit',
      );
    }
    const taken = await getServiceBySlug(db, accountId, slug);
    if (taken && taken.service_id !== exceptServiceId) {
      throw new HttpError('slug_taken', `this account already has a service called ${slug}`);
    }
  }

  function checkEventType(eventType: string) {
    if (!isValidEventType(eventType))
      throw new HttpError('invalid_event_type', describeInvalidEventType(eventType));
  }

  api.post(
    '/api/v1/services',
    {
      schema: {
        summary: 'Create a service from a whitelisted workflow',
        tags: ['services'],
        security,
        body: CreateService,
        response: {
          201: ServiceSchema,
          ...problems(
            CHANGE_PROBLEMS,
            'repository_not_found',
            'provider_not_enabled',
            'invalid_workflow_file',
            'workflow_not_whitelisted',
            'invalid_slug',
            'slug_taken',
            'invalid_event_type',
            'limit_reached',
          ),
        },
      },
    },
    async (request, reply) => {
      const caller = requireCaller(request);
      const body = request.body;
      const [owner, repo] = body.repository.split('/');
      if (!owner || !repo) throw new HttpError('invalid_request', 'repository must be owner/repo');
      const { repository } = await memberRepository(db, caller, owner, repo);
      const accountId = repository.account_id;
      if (!repository.provider_enabled) {
        throw new HttpError(
          'provider_not_enabled',
          `${repository.full_name} is not enabled as a provider: PUT /api/v1/repositories/${repository.full_name}/provider {"enabled":true}`,
        );
      }
      const workflowPath = toWorkflowPath(body.workflow);
      if (workflowPath === null) {
        throw new HttpError(
          'invalid_workflow_file',
          `${body.workflow} is not a workflow file name such as deploy.yml`,
        );
      }
      const workflow = await getWorkflow(db, repository.repository_id, workflowPath);
      if (!workflow?.whitelisted) {
        throw new HttpError(
          'workflow_not_whitelisted',
          `whitelist ${workflowPath} first: PUT /api/v1/repositories/${repository.full_name}/workflows/${workflowPath.split('/').pop()} {"whitelisted":true}`,
        );
      }
      await checkSlug(accountId, body.slug);
      const eventType = body.eventType ?? DEFAULT_EVENT_TYPE;
      checkEventType(eventType);
      const service = await withinAccountCap(context, 'services', accountId, async (trx) => {
        const now = context.clock.now();
        const fields = {
          slug: body.slug,
          eventType,
          description: body.description ?? '',
          tags: body.tags ?? [],
          visibility: body.visibility ?? 'public',
          published: body.published ?? false,
        };
        const created = await createService(
          trx,
          { accountId, repositoryId: repository.repository_id, workflowPath, ...fields },
          now,
        );
        await recordAudit(
          trx,
          {
            actor: auditActor(caller),
            accountIds: [accountId],
            action: 'service.create',
            target: { type: 'service', id: created.service_id },
            after: { repository: repository.full_name, workflow: workflowPath, ...fields },
          },
          now,
        );
        return created;
      });
      return reply.code(201).send(await view(service));
    },
  );

  api.get(
    '/api/v1/services',
    {
      schema: {
        summary: "Services of the caller's accounts",
        tags: ['services'],
        security,
        querystring: Type.Object({ account: Type.Optional(Type.String()), ...PageQuery }),
        response: {
          200: ServicePageSchema,
          ...problems(AUTH_PROBLEMS, 'account_not_found', 'invalid_cursor'),
        },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const accountIds = request.query.account
        ? [memberAccount(caller, request.query.account).account_id]
        : caller.accounts.map((a) => a.account_id);
      const { limit, store } = readPage(request.query, [CURSOR_FIELDS.name, CURSOR_FIELDS.id('svc')]);
      const page = pageOf(await listServices(db, accountIds, store), limit, (s) => [s.slug, s.service_id]);
      return { services: await views(page.items), nextCursor: page.nextCursor };
    },
  );

  api.get(
    '/api/v1/services/:id',
    {
      schema: {
        summary: 'One service',
        tags: ['services'],
        security,
        params: Type.Object({ id: Type.String() }),
        response: { 200: ServiceSchema, ...problems(AUTH_PROBLEMS, PATH_PROBLEMS, 'service_not_found') },
      },
    },
    async (request) => view(await ownService(requireCaller(request), request.params.id)),
  );

  api.patch(
    '/api/v1/services/:id',
    {
      schema: {
        summary: 'Change or publish a service',
        tags: ['services'],
        security,
        params: Type.Object({ id: Type.String() }),
        body: UpdateService,
        response: {
          200: ServiceSchema,
          ...problems(
            CHANGE_PROBLEMS,
            PATH_PROBLEMS,
            'service_not_found',
            'invalid_slug',
            'slug_taken',
            'invalid_event_type',
          ),
        },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const service = await ownService(caller, request.params.id);
      const body = request.body;
      if (body.slug !== undefined) await checkSlug(service.account_id, body.slug, service.service_id);
      if (body.eventType !== undefined) checkEventType(body.eventType);
      const edit = serviceEdit(
        {
          slug: service.slug,
          eventType: service.event_type,
          description: service.description,
          tags: parseTags(service.tags),
          visibility: service.visibility,
          published: Boolean(service.published),
        },
        { ...body },
      );
      await context.store.transaction(async (trx) => {
        const now = context.clock.now();
        await updateService(trx, service.service_id, body, now);
        if (!edit) return;
        await recordAudit(
          trx,
          {
            actor: auditActor(caller),
            accountIds: [service.account_id],
            action: edit.action,
            target: { type: 'service', id: service.service_id },
            before: edit.before,
            after: edit.after,
          },
          now,
        );
      });
      return view((await getService(db, service.service_id))!);
    },
  );
}
