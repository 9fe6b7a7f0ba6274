import { STALE_AFTER } from '../api/changes';
import { api, ok } from '../api/client';
import { Page, TableWrap } from '../components/page';
import { Empty, QueryView } from '../components/states';
import { Switch } from '../components/switch';
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
      <QueryView query={repositories} what="repositories">
        {(list) =>
          list.length === 0 ? (
            <Empty title={`No repositories in ${account.login}’s installation.`}>
              Add repositories to the Zekt App’s installation on GitHub (Settings › Applications › Zekt ›
              Configure); they appear here at once.
            </Empty>
          ) : (
            <TableWrap label="Repositories">
              <table aria-label="Provider repositories">
                <thead>
                  <tr>
                    <th scope="col">Repository</th>
                    <th scope="col">Visibility</th>
                    <th scope="col">Provider</th>
                    <th scope="col">Workflows</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((repository) => (
                    <tr key={repository.id}>
                      <th scope="row">{repository.fullName}</th>
                      <td>{repository.private ? 'Private' : 'Public'}</td>
                      <td>
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
                      </td>
                      <td>
                        {repository.provider.enabled ? (
                          <Link to={`/provider/workflows?repo=${encodeURIComponent(repository.fullName)}`}>
                            Workflows<span className="sr-only"> of {repository.fullName}</span>
                          </Link>
                        ) : (
                          <span className="muted">enable first</span>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )
        }
      </QueryView>
    </Page>
  );
}
