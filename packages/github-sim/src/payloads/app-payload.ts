import { toGitHubTimestamp } from '../clock.js';
import type { AppRecord } from '../sim-state.js';
import type { SimUrls } from '../sim-urls.js';
import { userPayload } from './user-payload.js';

/** The App ("Integration") as `GET /app` returns it. */
export function appPayload(app: AppRecord, installationsCount: number, urls: SimUrls) {
  const created = toGitHubTimestamp(app.createdAt);
  return {
    id: app.id,
    slug: app.slug,
    node_id: Buffer.from(`011:Integration${app.id}`).toString('base64'),
    client_id: app.clientId,
    owner: userPayload(app.owner, urls),
    name: app.name,
    description: app.description,
    external_url: app.externalUrl ?? `${urls.base}/${app.owner.login}`,
    html_url: `${urls.base}/apps/${app.slug}`,
    created_at: created,
    updated_at: created,
    permissions: { ...app.permissions },
    events: [...app.events],
    installations_count: installationsCount,
  };
}
