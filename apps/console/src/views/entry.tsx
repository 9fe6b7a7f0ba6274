import { api, loginUrl, type Me, ok } from '../api/client';
import { Page } from '../components/page';
import { Loading } from '../components/states';
import { useQuery } from '../hooks/use-query';
import { Link } from '../router';
import { SetupView } from './setup';

/**
 * A visitor without a session: what Zekt is, and the way in (GitHub login, back to this page) —
 * or, while Zekt has no GitHub App yet (setup mode), the first-run page.
 */
export function LoginView() {
  const setup = useQuery(['setup', 'mode'], () => ok(api.GET('/api/setup'), { unauthorized: 'throw' }));
  if (setup.data?.configured === false) return <SetupView />;
  if (setup.data === undefined && setup.error === undefined) {
    return (
      <main className="login">
        <Loading what="Zekt" />
      </main>
    );
  }
  return (
    <main className="login">
      <h1>Zekt</h1>
      <p>
        Event routing for GitHub Actions: when a provider’s workflow finishes, its subscribers’ repositories
        receive it — and you see what was delivered, started and finished.
      </p>
      <a className="button primary" href={loginUrl()}>
        Log in with GitHub
      </a>
    </main>
  );
}

/** Logged in, but no account of theirs has the App: how to install it. */
export function NoAccountView({ me }: { me: Me }) {
  return (
    <Page title="Install the Zekt App">
      <p>
        You are logged in as <strong>{me.user.login}</strong>, but none of your accounts has the Zekt GitHub
        App installed, so there is nothing Zekt may do for you yet.
      </p>
      <ol className="steps">
        <li>
          {me.installUrl ? (
            <a href={me.installUrl}>Install the Zekt App on GitHub</a>
          ) : (
            'Ask your Zekt operator for the GitHub App’s page and install the App'
          )}{' '}
          on your user account or on an organisation, with the repositories that provide or receive events.
        </li>
        <li>
          Whoever installs the App becomes a member of that account in Zekt. Organisation members: log out and
          in again, and Zekt reads your organisations’ installations from GitHub.
        </li>
        <li>
          Then enable repositories under <em>Provider › Zekt Repos</em> or <em>Consumer › Zekt Repos</em>.
        </li>
      </ol>
    </Page>
  );
}

export function NotFoundView() {
  return (
    <Page title="Not found">
      <p>
        There is no such page in the console. <Link to="/">Go to My Connections</Link>.
      </p>
    </Page>
  );
}
