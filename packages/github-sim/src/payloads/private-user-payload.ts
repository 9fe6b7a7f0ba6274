import { toGitHubTimestamp } from '../clock.js';
import type { AccountRecord, RepositoryRecord } from '../sim-state.js';
import type { SimUrls } from '../sim-urls.js';
import type { PrivateUser } from '../types.js';
import { userPayload } from './user-payload.js';

/**
 * The user as `GET /user` shows them to their own token: the Simple User fields plus the profile
 * (the simulator knows no profile, so it is a plausible empty one named after the login) and the
 * repository counts of the repositories the simulator knows, on GitHub's free plan.
 */
export function privateUserPayload(
  account: AccountRecord,
  repositories: Iterable<RepositoryRecord>,
  urls: SimUrls,
): PrivateUser {
  const owned = [...repositories].filter((repo) => repo.owner.id === account.id);
  const privateCount = owned.filter((repo) => repo.private).length;
  const created = toGitHubTimestamp(account.createdAt);
  return {
    ...userPayload(account, urls),
    user_view_type: 'private',
    name: account.login,
    company: null,
    blog: '',
    location: null,
    email: null,
    hireable: null,
    bio: null,
    twitter_username: null,
    public_repos: owned.length - privateCount,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: created,
    updated_at: created,
    private_gists: 0,
    total_private_repos: privateCount,
    owned_private_repos: privateCount,
    disk_usage: 0,
    collaborators: 0,
    two_factor_authentication: false,
    plan: { name: 'free', space: 976562499, collaborators: 0, private_repos: 10000 },
  };
}
