import type { AccountRecord } from '../sim-state.js';
import type { SimUrls } from '../sim-urls.js';
import type { SimpleUser } from '../types.js';

/** GitHub's "Simple User" object for an account (also used for organisations and bots). */
export function userPayload(account: AccountRecord, urls: SimUrls): SimpleUser {
  // Bot logins end in `[bot]`; GitHub percent-encodes them in URLs (`…/users/dependabot%5Bbot%5D`).
  const api = `${urls.api}/users/${encodeURIComponent(account.login)}`;
  return {
    login: account.login,
    id: account.id,
    node_id: account.nodeId,
    avatar_url: `${urls.base}/avatars/u/${account.id}?v=4`,
    gravatar_id: '',
    url: api,
    html_url:
      account.type === 'Bot'
        ? `${urls.base}/apps/${account.login.replace(/\[bot\]$/, '')}`
        : `${urls.base}/${account.login}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: account.type,
    user_view_type: 'public',
    site_admin: false,
  };
}
