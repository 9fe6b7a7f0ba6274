import { api, ok } from '../api/client';
import { Page } from '../components/page';
import { QueryView } from '../components/states';
import { Time } from '../components/time';
import { useQuery } from '../hooks/use-query';

/** Settings › GitHub App: which App Zekt acts as, and where its credentials come from. */
export function AppSettingsView() {
  const app = useQuery(['app-settings'], () => ok(api.GET('/api/v1/app')));
  return (
    <Page
      title="GitHub App"
      intro="The GitHub App Zekt acts as: it receives the webhooks, places hooks and sends the dispatches."
    >
      <QueryView query={app} what="the GitHub App">
        {(settings) => (
          <dl className="facts">
            <dt>Credentials</dt>
            <dd id="app-source">
              {settings.source === 'environment'
                ? 'From the environment (GITHUB_APP_ID, GITHUB_PRIVATE_KEY, GITHUB_WEBHOOK_SECRET): they win over an App registered through setup.'
                : 'Registered through setup: kept in Zekt’s store, encrypted with ZEKT_SECRET.'}
            </dd>
            <dt>App</dt>
            <dd>
              {settings.htmlUrl ? (
                <a href={settings.htmlUrl}>{settings.name ?? settings.slug}</a>
              ) : (
                (settings.name ?? '—')
              )}{' '}
              <span className="muted">(id {settings.appId})</span>
            </dd>
            {settings.owner ? (
              <>
                <dt>Owner</dt>
                <dd>{settings.owner}</dd>
              </>
            ) : null}
            {settings.registeredAt ? (
              <>
                <dt>Registered</dt>
                <dd>
                  <Time iso={settings.registeredAt} />
                </dd>
              </>
            ) : null}
            {settings.installUrl ? (
              <>
                <dt>Install</dt>
                <dd>
                  <a href={settings.installUrl}>Install the App on another account</a>
                </dd>
              </>
            ) : null}
          </dl>
        )}
      </QueryView>
    </Page>
  );
}
