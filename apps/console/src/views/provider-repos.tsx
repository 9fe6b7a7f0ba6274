import { STALE_AFTER } from '../api/changes';
import { api, ok } from '../api/client';
import { Page } from '../components/page';
import { Empty } from '../components/states';
import { Switch } from '../components/switch';
import { QueryTable } from '../components/table';
import { useInvalidate } from '../hooks/use-action';
import { Link } from '../router';
import { AccountPicker, useAccount } from '../session';
import { splitName, useRepositories } from './repositories';

/**
 * Provider › Zekt Repos: the repositories of the installation. The provider switch places Zekt's
 * webhook in the repository (GitHub then tells Zekt about every finished run) or removes it.
 */
export function ProviderReposView() {
  const account = useAccount();
  const repositories = useRepositories(account);
  const invalidate = useInvalidate();
  return (
    <Page
      title="Zekt Repos"
      intro="Enable a repository as a provider: Zekt places a webhook in it, and its whitelisted workflows’ runs are routed to subscribers."
      actions={<AccountPicker />}
    >
      <QueryTable
        query={repositories}
        what="repositories"
        rows={(list) => list}
        rowKey={(repository) => repository.id}
        label="Provider repositories"
        region="Repositories"
        empty={
          <Empty title={`No repositories in ${account.login}’s installation.`}>
            Add repositories to the Zekt App’s installation on GitHub (Settings › Applications › Zekt ›
            Configure); they appear here at once.
          </Empty>
        }
        columns={[
          { header: 'Repository', rowHeader: true, cell: (repository) => repository.fullName },
          { header: 'Visibility', cell: (repository) => (repository.private ? 'Private' : 'Public') },
          {
            header: 'Provider',
            cell: (repository) => (
              <Switch
                id={`provider-${repository.id}`}
                label={`Provider: ${repository.fullName}`}
                checked={repository.provider.enabled}
                stateText={(on) => (on ? 'Enabled — webhook placed' : 'Off')}
                onChange={async (enabled) => {
                  await ok(
                    api.PUT('/api/v1/repositories/{owner}/{repo}/provider', {
                      params: { path: splitName(repository.fullName) },
                      body: { enabled },
                    }),
                  );
                  await invalidate(...STALE_AFTER.repository);
                }}
              />
            ),
          },
          {
            header: 'Workflows',
            cell: (repository) =>
              repository.provider.enabled ? (
                <Link to={`/provider/workflows?repo=${encodeURIComponent(repository.fullName)}`}>
                  Workflows<span className="sr-only"> of {repository.fullName}</span>
                </Link>
              ) : (
                <span className="muted">enable first</span>
              ),
          },
        ]}
      />
    </Page>
  );
}
