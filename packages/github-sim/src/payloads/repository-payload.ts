import { toGitHubTimestamp } from '../clock.js';
import type { RepositoryRecord } from '../sim-state.js';
import type { SimUrls } from '../sim-urls.js';
import type { Repository } from '../types.js';
import { userPayload } from './user-payload.js';

/**
 * A repository in GitHub's "Repository"/"Full Repository" shape: what `GET /repos/{owner}/{repo}`,
 * `GET /installation/repositories` and the `repository` of webhook payloads carry.
 */
export function repositoryPayload(repo: RepositoryRecord, urls: SimUrls): Repository {
  const fullName = `${repo.owner.login}/${repo.name}`;
  const api = `${urls.api}/repos/${fullName}`;
  const html = `${urls.base}/${fullName}`;
  const host = new URL(urls.base).host;
  const created = toGitHubTimestamp(repo.createdAt);
  return {
    id: repo.id,
    node_id: repo.nodeId,
    name: repo.name,
    full_name: fullName,
    private: repo.private,
    owner: userPayload(repo.owner, urls),
    html_url: html,
    description: null,
    fork: false,
    url: api,
    archive_url: `${api}/{archive_format}{/ref}`,
    assignees_url: `${api}/assignees{/user}`,
    blobs_url: `${api}/git/blobs{/sha}`,
    branches_url: `${api}/branches{/branch}`,
    collaborators_url: `${api}/collaborators{/collaborator}`,
    comments_url: `${api}/comments{/number}`,
    commits_url: `${api}/commits{/sha}`,
    compare_url: `${api}/compare/{base}...{head}`,
    contents_url: `${api}/contents/{+path}`,
    contributors_url: `${api}/contributors`,
    deployments_url: `${api}/deployments`,
    downloads_url: `${api}/downloads`,
    events_url: `${api}/events`,
    forks_url: `${api}/forks`,
    git_commits_url: `${api}/git/commits{/sha}`,
    git_refs_url: `${api}/git/refs{/sha}`,
    git_tags_url: `${api}/git/tags{/sha}`,
    git_url: `git://${host}/${fullName}.git`,
    issue_comment_url: `${api}/issues/comments{/number}`,
    issue_events_url: `${api}/issues/events{/number}`,
    issues_url: `${api}/issues{/number}`,
    keys_url: `${api}/keys{/key_id}`,
    labels_url: `${api}/labels{/name}`,
    languages_url: `${api}/languages`,
    merges_url: `${api}/merges`,
    milestones_url: `${api}/milestones{/number}`,
    notifications_url: `${api}/notifications{?since,all,participating}`,
    pulls_url: `${api}/pulls{/number}`,
    releases_url: `${api}/releases{/id}`,
    ssh_url: `git@${new URL(urls.base).hostname}:${fullName}.git`,
    stargazers_url: `${api}/stargazers`,
    statuses_url: `${api}/statuses/{sha}`,
    subscribers_url: `${api}/subscribers`,
    subscription_url: `${api}/subscription`,
    tags_url: `${api}/tags`,
    teams_url: `${api}/teams`,
    trees_url: `${api}/git/trees{/sha}`,
    clone_url: `${html}.git`,
    mirror_url: null,
    hooks_url: `${api}/hooks`,
    svn_url: html,
    homepage: null,
    language: null,
    forks_count: 0,
    stargazers_count: 0,
    watchers_count: 0,
    size: 0,
    default_branch: repo.defaultBranch,
    open_issues_count: 0,
    is_template: false,
    topics: [],
    has_issues: true,
    has_projects: true,
    has_wiki: true,
    has_pages: false,
    has_downloads: true,
    has_discussions: false,
    archived: false,
    disabled: false,
    visibility: repo.private ? 'private' : 'public',
    pushed_at: created,
    created_at: created,
    updated_at: created,
    allow_forking: true,
    web_commit_signoff_required: false,
    license: null,
    forks: 0,
    open_issues: 0,
    watchers: 0,
    network_count: 0,
    subscribers_count: 0,
  };
}

/** The short repository reference of installation events: `{ id, node_id, name, full_name, private }`. */
export function repositoryRefPayload(repo: RepositoryRecord) {
  return {
    id: repo.id,
    node_id: repo.nodeId,
    name: repo.name,
    full_name: `${repo.owner.login}/${repo.name}`,
    private: repo.private,
  };
}
