import type { AppIdentity } from '../app-identity.js';
import { toGitHubTimestamp } from '../clock.js';
import type { InstallationRecord } from '../sim-state.js';
import type { SimUrls } from '../sim-urls.js';
import type { Installation } from '../types.js';
import { userPayload } from './user-payload.js';

/** An installation as `GET /app/installations/{id}` and the `installation` webhook return it. */
export function installationPayload(
  installation: InstallationRecord,
  app: AppIdentity,
  urls: SimUrls,
): Installation {
  const accountType = installation.account.type === 'Organization' ? 'Organization' : 'User';
  return {
    id: installation.id,
    client_id: app.clientId,
    account: userPayload(installation.account, urls),
    repository_selection: 'selected',
    access_tokens_url: `${urls.api}/app/installations/${installation.id}/access_tokens`,
    repositories_url: `${urls.api}/installation/repositories`,
    html_url:
      accountType === 'Organization'
        ? `${urls.base}/organizations/${installation.account.login}/settings/installations/${installation.id}`
        : `${urls.base}/settings/installations/${installation.id}`,
    app_id: app.id,
    app_slug: app.slug,
    target_id: installation.account.id,
    target_type: accountType,
    permissions: { ...installation.permissions },
    events: [...installation.events],
    created_at: toGitHubTimestamp(installation.createdAt),
    updated_at: toGitHubTimestamp(installation.updatedAt),
    single_file_name: null,
    has_multiple_single_files: false,
    single_file_paths: [],
    suspended_by: null,
    suspended_at: null,
  };
}

/** The short installation reference GitHub adds to App-level event payloads: `{ id, node_id }`. */
export function installationRefPayload(installation: InstallationRecord) {
  return {
    id: installation.id,
    node_id: Buffer.from(`026:IntegrationInstallation${installation.id}`).toString('base64'),
  };
}
