import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import { newId } from '../domain/ids.js';
import type { KeysetPage } from './page.js';
import type { Database, ServiceRow, ServiceVisibility } from './schema.js';

/** Services: whitelisted provider workflows offered to consumers. */

export interface NewService {
  accountId: number;
  repositoryId: number;
  workflowPath: string;
  slug: string;
  eventType: string;
  description: string;
  tags: string[];
  visibility: ServiceVisibility;
  published: boolean;
}

export async function createService(
  db: Kysely<Database>,
  service: NewService,
  now: number,
): Promise<ServiceRow> {
  const row = {
    service_id: newId('svc', now),
    account_id: service.accountId,
    repository_id: service.repositoryId,
    workflow_path: service.workflowPath,
    slug: service.slug,
    event_type: service.eventType,
    description: service.description,
    tags: JSON.stringify(service.tags),
    visibility: service.visibility,
    published: service.published,
    created_at: now,
    updated_at: now,
    schema_version: null,
    schema_enforcement: 'off' as const,
    schema_requires_message: false,
  };
  await db.insertInto('services').values(row).execute();
  return row;
}

export function getService(db: Kysely<Database>, serviceId: string): Promise<ServiceRow | undefined> {
  return db.selectFrom('services').selectAll().where('service_id', '=', serviceId).executeTakeFirst();
}

export function getServiceBySlug(
  db: Kysely<Database>,
  accountId: number,
  slug: string,
): Promise<ServiceRow | undefined> {
  return db
    .selectFrom('services')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('slug', '=', slug)
    .executeTakeFirst();
}

/** Services of these accounts, by slug. */
export function listServices(
  db: Kysely<Database>,
  accountIds: number[],
  page: KeysetPage = { limit: 1_000 },
): Promise<ServiceRow[]> {
  if (accountIds.length === 0) return Promise.resolve([]);
  return afterSlug(db.selectFrom('services').selectAll().where('account_id', 'in', accountIds), page)
    .orderBy('slug')
    .orderBy('service_id')
    .limit(page.limit)
    .execute();
}

/** Rows after the (slug, service id) key of the previous page. */
function afterSlug<Q extends SelectQueryBuilder<Database, 'services', ServiceRow>>(
  query: Q,
  page: KeysetPage,
): Q {
  if (!page.after) return query;
  const [slug, serviceId] = page.after as [string, string];
  return query.where((eb) =>
    eb.or([eb('slug', '>', slug), eb.and([eb('slug', '=', slug), eb('service_id', '>', serviceId)])]),
  ) as Q;
}

export type ServiceChanges = Partial<Omit<NewService, 'accountId' | 'repositoryId' | 'workflowPath'>>;

export async function updateService(
  db: Kysely<Database>,
  serviceId: string,
  changes: ServiceChanges,
  now: number,
): Promise<void> {
  await db
    .updateTable('services')
    .set({
      ...(changes.slug === undefined ? {} : { slug: changes.slug }),
      ...(changes.eventType === undefined ? {} : { event_type: changes.eventType }),
      ...(changes.description === undefined ? {} : { description: changes.description }),
      ...(changes.tags === undefined ? {} : { tags: JSON.stringify(changes.tags) }),
      ...(changes.visibility === undefined ? {} : { visibility: changes.visibility }),
      ...(changes.published === undefined ? {} : { published: changes.published }),
      updated_at: now,
    })
    .where('service_id', '=', serviceId)
    .execute();
}

/**
 * The directory: published services of installed accounts that are public, or visible to the
 * organisation the caller is a member of.
 */
export function listDirectory(
  db: Kysely<Database>,
  filter: {
    memberAccountIds: number[];
    q?: string | undefined;
    tag?: string | undefined;
    serviceId?: string | undefined;
  },
  page: KeysetPage = { limit: 1_000 },
): Promise<ServiceRow[]> {
  let query = db
    .selectFrom('services')
    .selectAll()
    .where('published', '=', true)
    // A provider that uninstalled the App routes nothing any more: its services leave the directory.
    .where(
      'account_id',
      'in',
      db.selectFrom('accounts').select('account_id').where('uninstalled_at', 'is', null),
    )
    .where((eb) =>
      filter.memberAccountIds.length === 0
        ? eb('visibility', '=', 'public')
        : eb.or([eb('visibility', '=', 'public'), eb('account_id', 'in', filter.memberAccountIds)]),
    );
  if (filter.serviceId) query = query.where('service_id', '=', filter.serviceId);
  if (filter.q) {
    const pattern = `%${escapeLike(filter.q.toLowerCase())}%`;
    query = query.where((eb) =>
      eb.or([
        eb(sql<string>`lower(slug)`, 'like', sql<string>`${pattern} escape '\\'`),
        eb(sql<string>`lower(description)`, 'like', sql<string>`${pattern} escape '\\'`),
        eb(sql<string>`lower(tags)`, 'like', sql<string>`${pattern} escape '\\'`),
      ]),
    );
  }
  if (filter.tag) {
    // Tags are stored as a JSON array: the tag's JSON string, quotes included, matches one element.
    const pattern = `%${escapeLike(JSON.stringify(filter.tag))}%`;
    query = query.where(sql<string>`tags`, 'like', sql<string>`${pattern} escape '\\'`);
  }
  return afterSlug(query, page).orderBy('slug').orderBy('service_id').limit(page.limit).execute();
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export function parseTags(tags: string): string[] {
  const parsed: unknown = JSON.parse(tags);
  return Array.isArray(parsed) ? parsed.filter((t): t is string => typeof t === 'string') : [];
}
