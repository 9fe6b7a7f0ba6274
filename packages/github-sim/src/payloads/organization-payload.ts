import type { AccountRecord } from '../sim-state.js';
import type { SimUrls } from '../sim-urls.js';

/** The `organization` object GitHub adds to events of organisation-owned repositories. */
export function organizationPayload(account: AccountRecord, urls: SimUrls) {
  const api = `${urls.api}/orgs/${account.login}`;
  return {
    login: account.login,
    id: account.id,
    node_id: account.nodeId,
    url: api,
    repos_url: `${api}/repos`,
    events_url: `${api}/events`,
    hooks_url: `${api}/hooks`,
    issues_url: `${api}/issues`,
    members_url: `${api}/members{/member}`,
    public_members_url: `${api}/public_members{/member}`,
    avatar_url: `${urls.base}/avatars/u/${account.id}?v=4`,
    description: null,
  };
}
