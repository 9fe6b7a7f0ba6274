import { type ReactNode, useState } from 'react';
import { api, type Me, ok } from './api/client';
import { ErrorState, Loading } from './components/states';
import { useQuery } from './hooks/use-query';
import { Link, useLocation } from './router';
import { SessionContext } from './session';
import { AlertsView } from './views/alerts';
import { AppSettingsView } from './views/app-settings';
import { AuditView } from './views/audit';
import { ConnectionsView } from './views/connections';
import { ConsumerReposView } from './views/consumer-repos';
import { DeliveryDetailView } from './views/delivery-detail';
import { DeliveryStatusView } from './views/delivery-status';
import { DirectoryView } from './views/directory';
import { LoginView, NoAccountView, NotFoundView } from './views/entry';
import { ProviderReposView } from './views/provider-repos';
import { ServiceFormView } from './views/service-form';
import { ServiceSchemaView } from './views/service-schema';
import { ServicesView } from './views/services';
import { SettingsView } from './views/settings';
import { SetupView } from './views/setup';
import { SubscribersView } from './views/subscribers';
import { SubscriptionsView } from './views/subscriptions';
import { UsageView } from './views/usage';
import { WorkflowsView } from './views/workflows';

/** The navigation, in the seed's words: Provider, Consumer, Directory, My Connections, Usage; then operations. */
const NAV: Array<{ section?: string; links: Array<[label: string, path: string]> }> = [
  {
    section: 'Provider',
    links: [
      ['Zekt Repos', '/provider/repos'],
      ['Zekt Workflows', '/provider/workflows'],
      ['Services', '/provider/services'],
      ['Subscribers', '/provider/subscribers'],
      ['Delivery Status', '/provider/deliveries'],
    ],
  },
  {
    section: 'Consumer',
    links: [
      ['Zekt Repos', '/consumer/repos'],
      ['Zekt Subscriptions', '/consumer/subscriptions'],
      ['Delivery Status', '/consumer/deliveries'],
    ],
  },
  {
    links: [
      ['Directory', '/directory'],
      ['My Connections', '/connections'],
      ['Usage', '/usage'],
      ['Alerts', '/alerts'],
      ['Audit', '/audit'],
      ['Settings', '/settings'],
      ['GitHub App', '/settings/app'],
    ],
  },
];

function route(path: string): ReactNode {
  const delivery = /^\/deliveries\/([^/]+)$/.exec(path);
  if (delivery) return <DeliveryDetailView deliveryId={decodeURIComponent(delivery[1]!)} />;
  const schema = /^\/provider\/services\/([^/]+)\/schema$/.exec(path);
  if (schema) return <ServiceSchemaView serviceId={decodeURIComponent(schema[1]!)} />;
  const service = /^\/provider\/services\/([^/]+)$/.exec(path);
  if (service)
    return <ServiceFormView serviceId={service[1] === 'new' ? undefined : decodeURIComponent(service[1]!)} />;
  switch (path) {
    case '/':
    case '/connections':
      return <ConnectionsView />;
    case '/provider/repos':
      return <ProviderReposView />;
    case '/provider/workflows':
      return <WorkflowsView />;
    case '/provider/services':
      return <ServicesView />;
    case '/provider/subscribers':
      return <SubscribersView />;
    case '/provider/deliveries':
      return <DeliveryStatusView side="provider" />;
    case '/consumer/repos':
      return <ConsumerReposView />;
    case '/consumer/subscriptions':
      return <SubscriptionsView />;
    case '/consumer/deliveries':
      return <DeliveryStatusView side="consumer" />;
    case '/directory':
      return <DirectoryView />;
    case '/usage':
      return <UsageView />;
    case '/alerts':
      return <AlertsView />;
    case '/audit':
      return <AuditView />;
    case '/settings':
      return <SettingsView />;
    case '/settings/app':
      return <AppSettingsView />;
    default:
      return <NotFoundView />;
  }
}

/** The link of the current view (Delivery Status's detail pages belong to no section). */
function isCurrent(linkPath: string, path: string): boolean {
  return (
    path === linkPath || (linkPath === '/connections' && path === '/') || path.startsWith(`${linkPath}/`)
  );
}

export function App() {
  const { path } = useLocation();
  // The first-run page needs no session: it is where the App that logs people in is registered.
  if (path === '/setup') return <SetupView />;
  return <Console />;
}

function Console() {
  const session = useQuery(['me'], () => ok(api.GET('/api/v1/me'), { unauthorized: 'throw' }));
  const [loggedOut, setLoggedOut] = useState(false);
  if (loggedOut || session.error?.status === 401) return <LoginView />;
  if (session.error) {
    return (
      <main className="shell-main">
        <ErrorState title="Could not reach Zekt" error={session.error} retry={session.reload} />
      </main>
    );
  }
  if (!session.data) {
    return (
      <main className="shell-main">
        <Loading what="your session" />
      </main>
    );
  }
  return (
    <SessionContext.Provider value={session.data}>
      <Shell me={session.data} onLoggedOut={() => setLoggedOut(true)} />
    </SessionContext.Provider>
  );
}

function Shell({ me, onLoggedOut }: { me: Me; onLoggedOut: () => void }) {
  const { path } = useLocation();
  // The small-screen menu is open for the page it was opened on: it closes once the user goes somewhere.
  const [menuOpenOn, setMenuOpenOn] = useState<string | null>(null);
  const menuOpen = menuOpenOn === path;

  const logOut = async () => {
    await fetch('/auth/logout', { method: 'POST', credentials: 'same-origin' });
    onLoggedOut();
  };

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to="/" className="brand">
          Zekt
        </Link>
        <button
          type="button"
          className="menu-button"
          aria-expanded={menuOpen}
          aria-controls="console-nav"
          onClick={() => setMenuOpenOn(menuOpen ? null : path)}
        >
          Menu
        </button>
        <div className="who">
          <span id="user">{me.user.login}</span>
          <span className="muted">{me.accounts.map((a) => a.login).join(', ') || 'no accounts'}</span>
          <button type="button" onClick={() => void logOut()}>
            Log out
          </button>
        </div>
      </header>
      <div className="shell">
        <nav id="console-nav" aria-label="Console" className={menuOpen ? 'open' : ''}>
          <ul>
            {NAV.map((group) =>
              group.section ? (
                <li key={group.section} className="nav-group">
                  <span className="nav-section" id={`nav-${group.section}`}>
                    {group.section}
                  </span>
                  <ul aria-labelledby={`nav-${group.section}`}>
                    {group.links.map(([label, to]) => (
                      <li key={to}>
                        <Link to={to} aria-current={isCurrent(to, path) ? 'page' : undefined}>
                          <span className="sr-only">{group.section} </span>
                          {label}
                        </Link>
                      </li>
                    ))}
                  </ul>
                </li>
              ) : (
                group.links.map(([label, to]) => (
                  <li key={to} className="nav-top">
                    <Link to={to} aria-current={isCurrent(to, path) ? 'page' : undefined}>
                      {label}
                    </Link>
                  </li>
                ))
              ),
            )}
          </ul>
        </nav>
        <main id="main" className="shell-main">
          {me.accounts.length === 0 ? <NoAccountView me={me} /> : route(path)}
        </main>
      </div>
    </>
  );
}
