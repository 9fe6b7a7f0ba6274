import type { Kysely } from 'kysely';
import Type from 'typebox';
import {
  type Enforcement,
  EXAMPLE_LIMIT_BYTES,
  type JsonSchema,
  localSchemaProblem,
  SCHEMA_LIMIT_BYTES,
} from '../../domain/message-schema.js';
import {
  type CompatibilityReport,
  canonicalJson,
  compareSchemas,
  firstSchemaReport,
} from '../../domain/schema-compatibility.js';
import { recordAudit } from '../../store/audit.js';
import type { Database, SchemaViolationRow, ServiceRow, ServiceSchemaRow } from '../../store/schema.js';
import { listViolations } from '../../store/schema-violations.js';
import {
  getSchemaVersion,
  insertSchemaVersion,
  listSchemaVersions,
  setSchemaEnforcement,
} from '../../store/service-schemas.js';
import { getService, listDirectory } from '../../store/services.js';
import { isUniqueViolation } from '../../store/store-errors.js';
import {
  AUTH_PROBLEMS,
  CHANGE_PROBLEMS,
  PATH_PROBLEMS,
  problems,
  SchemaSaveSchema,
  SchemaVersionPageSchema,
  SchemaVersionSchema,
  type SchemaVersionView,
  SchemaViolationPageSchema,
  type SchemaViolationView,
} from '../api-schemas.js';
import type { App, AppContext } from '../app-context.js';
import { auditActor } from '../audit-actor.js';
import { type Caller, isMemberOf, MANAGEMENT_SECURITY, requireCaller } from '../authenticate.js';
import { CURSOR_FIELDS, PageQuery, pageOf, readPage } from '../pagination.js';
import { HttpError } from '../problem.js';
import { isoAt } from '../views.js';
import { accountLogins, repositoryNames } from './lookups.js';

/**
 * Event contracts (docs/contracts.md): a service's message schema, in numbered versions. Providers
 * save and read them under `/api/v1/services/{id}/schema`; consumers read the one of a service the
 * Directory shows them under `/api/v1/directory/{id}/schema`; providers read the violations their
 * runs' messages made under `/api/v1/schema-violations`.
 */
const security = MANAGEMENT_SECURITY;
const EnforcementSchema = Type.Union([Type.Literal('off'), Type.Literal('warn'), Type.Literal('enforce')]);
const VersionQuery = Type.Object({
  version: Type.Optional(Type.String({ description: 'a version number; default: the one in force' })),
});
/** The request and answers of both reads of one schema version: the provider's and the Directory's. */
const versionRead = {
  tags: ['services'],
  security,
  params: Type.Object({ id: Type.String() }),
  querystring: VersionQuery,
  response: {
    200: SchemaVersionSchema,
    ...problems(AUTH_PROBLEMS, PATH_PROBLEMS, 'service_not_found', 'schema_not_found', 'invalid_request'),
  },
};

const SaveSchema = Type.Object(
  {
    schema: Type.Optional(
      Type.Unknown({
        description:
          'JSON Schema draft 2020-12, at most 64 KB, local $refs only; leave out to change only `enforcement`',
      }),
    ),
    enforcement: Type.Optional(EnforcementSchema),
    example: Type.Optional(Type.Unknown({ description: 'an example message, checked against the schema' })),
    acceptBreaking: Type.Optional(
      Type.Boolean({ description: 'save a version that removes or narrows what the one in force accepted' }),
    ),
  },
  { additionalProperties: false },
);

export function registerServiceSchemaRoutes(
  api: App,
  context: Pick<AppContext, 'store' | 'clock' | 'schemaChecks' | 'alerts'>,
): void {
  const db = context.store.db;

  async function ownService(caller: Caller, serviceId: string): Promise<ServiceRow> {
    const service = await getService(db, serviceId);
    if (!service || !isMemberOf(caller, service.account_id)) {
      throw new HttpError('service_not_found', `no service ${serviceId} of an account you are a member of`);
    }
    return service;
  }

  api.put(
    '/api/v1/services/:id/schema',
    {
      schema: {
        summary: 'Save a message schema (a new version when it changed) and its enforcement',
        description:
          'With `?dryRun=true` nothing is saved: the answer is the version it would make and its compatibility report against the version in force.',
        tags: ['services'],
        security,
        params: Type.Object({ id: Type.String() }),
        querystring: Type.Object({
          dryRun: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
        }),
        body: SaveSchema,
        response: {
          200: SchemaSaveSchema,
          ...problems(
            CHANGE_PROBLEMS,
            PATH_PROBLEMS,
            'service_not_found',
            'invalid_schema',
            'invalid_example',
            'schema_too_large',
            'breaking_schema_change',
          ),
        },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const service = await ownService(caller, request.params.id);
      const body = request.body;
      const dryRun = request.query.dryRun === 'true';
      const current =
        service.schema_version === null
          ? undefined
          : await getSchemaVersion(db, service.service_id, service.schema_version);
      const enforcement: Enforcement = body.enforcement ?? service.schema_enforcement;
      if (body.schema === undefined && current === undefined) {
        throw new HttpError(
          'invalid_request',
          'the service has no schema yet: send `schema` (JSON Schema draft 2020-12) with `enforcement`',
        );
      }
      const schema = (body.schema ?? JSON.parse(current!.schema)) as JsonSchema;
      const schemaJson = JSON.stringify(schema);
      const schemaBytes = Buffer.byteLength(schemaJson, 'utf8');
      if (schemaBytes > SCHEMA_LIMIT_BYTES) {
        throw new HttpError(
          'schema_too_large',
          `the schema is ${schemaBytes} bytes serialized; the limit is ${SCHEMA_LIMIT_BYTES} (64 KB): move what only documents (long descriptions) elsewhere`,
        );
      }
      // An unchanged schema keeps its example unless a new one is sent.
      const sameSchema =
        current !== undefined && canonicalJson(JSON.parse(current.schema)) === canonicalJson(schema);
      const example =
        body.example !== undefined
          ? body.example
          : sameSchema && current?.example != null
            ? JSON.parse(current.example)
            : undefined;
      const exampleJson = example === undefined || example === null ? null : JSON.stringify(example);
      if (exampleJson !== null && Buffer.byteLength(exampleJson, 'utf8') > EXAMPLE_LIMIT_BYTES) {
        throw new HttpError('schema_too_large', `the example is over ${EXAMPLE_LIMIT_BYTES} bytes (64 KB)`);
      }
      const local = localSchemaProblem(schema);
      if (local)
        throw new HttpError('invalid_schema', `${local.pointer || '(the schema)'}: ${local.message}`, {
          pointer: local.pointer,
        });
      const compiled = await context.schemaChecks.compile(schema, exampleJson === null ? undefined : example);
      if (!compiled.ok) {
        throw new HttpError(
          'invalid_schema',
          `${compiled.problem.pointer || '(the schema)'}: ${compiled.problem.message}`,
          { pointer: compiled.problem.pointer },
        );
      }
      if (compiled.example !== null && compiled.example.errorCount > 0) {
        const first = compiled.example.errors[0]!;
        throw new HttpError(
          'invalid_example',
          `the example does not match the schema: ${first.pointer || '(the message)'} ${first.message}${compiled.example.errorCount > 1 ? ` (and ${compiled.example.errorCount - 1} more)` : ''}`,
          { errors: compiled.example.errors, errorCount: compiled.example.errorCount },
        );
      }
      const changed =
        current === undefined || !sameSchema || (current.example ?? null) !== (exampleJson ?? null);
      const compatibility =
        current === undefined
          ? firstSchemaReport()
          : compareSchemas(JSON.parse(current.schema), schema, current.version);
      const version = changed ? (service.schema_version ?? 0) + 1 : current!.version;
      const now = context.clock.now();
      const answer = {
        serviceId: service.service_id,
        version,
        enforcement,
        schema,
        example: example ?? null,
        requiresMessage: compiled.requiresMessage,
        compatibility: changed ? compatibility : JSON.parse(current!.compatibility),
        createdAt: isoAt(changed ? now : current!.created_at),
        createdBy: changed ? auditActor(caller).login : current!.created_by,
        changed,
        saved: !dryRun,
      };
      if (dryRun) return answer;
      if (changed && compatibility.breaking && body.acceptBreaking !== true) {
        throw new HttpError(
          'breaking_schema_change',
          `version ${version} would break what version ${current?.version} accepted (${compatibility.changes
            .filter((c) => c.breaking)
            .slice(0, 3)
            .map((c) => c.message)
            .join('; ')}): send acceptBreaking: true to save it; the service's subscribers are alerted`,
          { compatibility },
        );
      }
      if (!changed && enforcement === service.schema_enforcement) return answer;
      try {
        await context.store.transaction(async (trx) => {
          if (changed) {
            await insertSchemaVersion(
              trx,
              {
                serviceId: service.service_id,
                accountId: service.account_id,
                version,
                schemaJson,
                exampleJson,
                requiresMessage: compiled.requiresMessage,
                compatibilityJson: JSON.stringify(compatibility),
                createdBy: answer.createdBy,
              },
              enforcement,
              now,
            );
            await recordAudit(
              trx,
              {
                actor: auditActor(caller),
                accountIds: [service.account_id],
                action: 'service.schema_version',
                target: { type: 'service', id: service.service_id },
                before: current ? { schemaVersion: current.version } : null,
                after: {
                  schemaVersion: version,
                  enforcement,
                  breaking: compatibility.breaking,
                  changes: compatibility.changes.length,
                },
              },
              now,
            );
            await alertSubscribers(trx, service, version, enforcement, compatibility);
          } else {
            await setSchemaEnforcement(trx, service.service_id, enforcement, now);
          }
          if (enforcement !== service.schema_enforcement) {
            await recordAudit(
              trx,
              {
                actor: auditActor(caller),
                accountIds: [service.account_id],
                action: 'service.schema_enforcement',
                target: { type: 'service', id: service.service_id },
                before: { enforcement: service.schema_enforcement },
                after: { enforcement },
              },
              now,
            );
          }
        });
      } catch (error) {
        // Two saves of one service at once: the second found the version number taken.
        if (isUniqueViolation(error)) {
          throw new HttpError(
            'store_conflict',
            'another version of this schema was saved at the same time: read it, then save again',
            {},
            { headers: { 'retry-after': '1' } },
          );
        }
        throw error;
      }
      return answer;
    },
  );

  /** One alert per subscribed account, in the transaction that saves the version. */
  async function alertSubscribers(
    trx: Kysely<Database>,
    service: ServiceRow,
    version: number,
    enforcement: Enforcement,
    compatibility: CompatibilityReport,
  ): Promise<void> {
    const subscribers = await trx
      .selectFrom('subscriptions')
      .select('consumer_account_id')
      .distinct()
      .where('service_id', '=', service.service_id)
      .where('status', '=', 'approved')
      .execute();
    const provider = (await accountLogins(trx, [service.account_id])).get(service.account_id) ?? '';
    for (const { consumer_account_id } of subscribers) {
      await context.alerts.raise(
        {
          accountId: consumer_account_id,
          kind: 'service.schema_changed',
          subject: `${service.service_id}@${version}:${consumer_account_id}`,
          data: {
            serviceId: service.service_id,
            service: service.slug,
            provider,
            schemaVersion: version,
            enforcement,
            compatibility: { ...compatibility, changes: compatibility.changes.slice(0, 50) },
          },
        },
        trx,
      );
    }
  }

  api.get(
    '/api/v1/services/:id/schema',
    {
      schema: {
        summary: "A service's message schema: the version in force, or ?version=n",
        ...versionRead,
      },
    },
    async (request) => {
      const service = await ownService(requireCaller(request), request.params.id);
      return schemaVersionView(service, await readVersion(service, request.query.version), true);
    },
  );

  api.get(
    '/api/v1/services/:id/schema/versions',
    {
      schema: {
        summary: "Every version of a service's message schema, newest first, with its compatibility report",
        tags: ['services'],
        security,
        params: Type.Object({ id: Type.String() }),
        querystring: Type.Object({ ...PageQuery }),
        response: {
          200: SchemaVersionPageSchema,
          ...problems(AUTH_PROBLEMS, PATH_PROBLEMS, 'service_not_found', 'invalid_cursor'),
        },
      },
    },
    async (request) => {
      const service = await ownService(requireCaller(request), request.params.id);
      const { limit, store } = readPage(request.query, [CURSOR_FIELDS.ordinal]);
      const page = pageOf(await listSchemaVersions(db, service.service_id, store), limit, (v) => [
        String(v.version),
      ]);
      return {
        versions: page.items.map((row) => schemaVersionView(service, row, true)),
        nextCursor: page.nextCursor,
      };
    },
  );

  api.get(
    '/api/v1/directory/:id/schema',
    {
      schema: {
        summary:
          'The message schema of a service the Directory shows the caller (?version=n for an older one)',
        ...versionRead,
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const [service] = await listDirectory(db, {
        memberAccountIds: caller.accounts.map((a) => a.account_id),
        serviceId: request.params.id,
      });
      if (!service) {
        throw new HttpError(
          'service_not_found',
          `no service ${request.params.id} in the Directory you can see`,
        );
      }
      return schemaVersionView(service, await readVersion(service, request.query.version), false);
    },
  );

  async function readVersion(service: ServiceRow, raw: string | undefined): Promise<ServiceSchemaRow> {
    if (raw !== undefined && !/^[1-9]\d{0,8}$/.test(raw)) {
      throw new HttpError('invalid_request', 'version must be a version number: 1, 2, …');
    }
    const version = raw === undefined ? service.schema_version : Number(raw);
    const row = version === null ? undefined : await getSchemaVersion(db, service.service_id, version);
    if (!row) {
      throw new HttpError(
        'schema_not_found',
        version === null
          ? `service ${service.slug} has no message schema`
          : `service ${service.slug} has no schema version ${version} (the newest is ${service.schema_version ?? 'none'})`,
      );
    }
    return row;
  }

  api.get(
    '/api/v1/schema-violations',
    {
      schema: {
        summary: "Messages (or missing ones) that broke a schema of the caller's services, newest first",
        tags: ['services'],
        security,
        querystring: Type.Object({
          service: Type.Optional(Type.String({ description: 'one service id' })),
          ...PageQuery,
        }),
        response: { 200: SchemaViolationPageSchema, ...problems(AUTH_PROBLEMS, 'invalid_cursor') },
      },
    },
    async (request) => {
      const caller = requireCaller(request);
      const { limit, store } = readPage(request.query, [CURSOR_FIELDS.id('scv')]);
      const rows = await listViolations(
        db,
        caller.accounts.map((a) => a.account_id),
        { serviceId: request.query.service },
        store,
      );
      const page = pageOf(rows, limit, (v) => [v.violation_id]);
      return { violations: await violationViews(db, page.items), nextCursor: page.nextCursor };
    },
  );
}

function schemaVersionView(service: ServiceRow, row: ServiceSchemaRow, provider: boolean): SchemaVersionView {
  return {
    serviceId: service.service_id,
    version: row.version,
    enforcement: service.schema_enforcement,
    schema: JSON.parse(row.schema),
    example: row.example === null ? null : JSON.parse(row.example),
    requiresMessage: Boolean(row.requires_message),
    compatibility: JSON.parse(row.compatibility),
    createdAt: isoAt(row.created_at),
    ...(provider ? { createdBy: row.created_by } : {}),
  };
}

async function violationViews(
  db: Kysely<Database>,
  rows: SchemaViolationRow[],
): Promise<SchemaViolationView[]> {
  const serviceIds = [...new Set(rows.map((r) => r.service_id))];
  const [services, names] = await Promise.all([
    serviceIds.length === 0
      ? []
      : db
          .selectFrom('services')
          .select(['service_id', 'slug'])
          .where('service_id', 'in', serviceIds)
          .execute(),
    repositoryNames(
      db,
      rows.map((r) => r.repository_id),
    ),
  ]);
  const slugs = new Map(services.map((s) => [s.service_id, s.slug]));
  return rows.map((row) => ({
    id: row.violation_id,
    service: { id: row.service_id, slug: slugs.get(row.service_id) ?? '' },
    schemaVersion: row.schema_version,
    enforcement: row.enforcement,
    kind: row.kind,
    outcome: row.outcome,
    repository: names.get(row.repository_id) ?? '',
    runId: Number(row.run_id),
    runAttempt: row.run_attempt,
    errors: JSON.parse(row.errors),
    errorCount: row.error_count,
    createdAt: isoAt(row.created_at),
  }));
}
