import { toGitHubTimestamp } from '../clock.js';
import type { HookRecord, RepositoryRecord } from '../sim-state.js';
import type { SimUrls } from '../sim-urls.js';

/** GitHub never returns a hook secret; it shows this mask instead. */
export const MASKED_SECRET = '********';

/** A repository hook as the REST API (and the `ping` event's `hook`) shows it. */
export function hookPayload(hook: HookRecord, repo: RepositoryRecord, urls: SimUrls) {
  const url = `${urls.api}/repos/${repo.owner.login}/${repo.name}/hooks/${hook.id}`;
  const config: Record<string, string> = {
    content_type: hook.config.content_type,
    insecure_ssl: hook.config.insecure_ssl,
    url: hook.config.url,
  };
  if (hook.config.secret !== undefined) config.secret = MASKED_SECRET;
  return {
    type: 'Repository',
    id: hook.id,
    name: 'web',
    active: hook.active,
    events: [...hook.events],
    config,
    updated_at: toGitHubTimestamp(hook.updatedAt),
    created_at: toGitHubTimestamp(hook.createdAt),
    url,
    test_url: `${url}/test`,
    ping_url: `${url}/pings`,
    deliveries_url: `${url}/deliveries`,
    last_response: { ...hook.lastResponse },
  };
}
