import { type FormEvent, useState } from 'react';
import { api, loginUrl, ok, type SetupStatus } from '../api/client';
import { Field } from '../components/field';
import { ErrorState, InlineError, Loading } from '../components/states';
import { useAction } from '../hooks/use-action';
import { useQuery } from '../hooks/use-query';
import { useLocation } from '../router';

/**
 * The first-run page (`/setup`, and every page while Zekt has no GitHub App): registering the App
 * from a manifest on GitHub, then installing it, then logging in. Only a browser that opened the
 * setup URL `zekt serve` printed (its code becomes a setup session) may register; once an App is
 * configured the page says where its credentials come from and offers the login.
 */
export function SetupView() {
  const { query } = useLocation();
  // Polled: the page moves on when the App is installed (GitHub sends the installation webhook).
  const status = useQuery(['setup'], () => ok(api.GET('/api/setup'), { unauthorized: 'throw' }), {
    pollMs: 2000,
  });
  const problem = query.get('problem');
  return (
    <main className="setup" id="main">
      <h1>Set up Zekt</h1>
      {status.data === undefined ? (
        status.error ? (
          <ErrorState title="Could not reach Zekt" error={status.error} retry={status.reload} />
        ) : (
          <Loading what="the setup" />
        )
      ) : problem !== null && !status.data.configured ? (
        <SetupProblem code={problem} status={status.data} />
      ) : (
        <SetupStep status={status.data} installed={query.get('setup_action') === 'install'} />
      )}
    </main>
  );
}

function SetupStep({ status, installed }: { status: SetupStatus; installed: boolean }) {
  if (!status.configured) {
    return status.setupSession ? <RegisterApp status={status} /> : <NeedsSetupCode />;
  }
  if (status.app === null) {
    return (
      <>
        <p>
          Zekt is set up: its GitHub App{' '}
          {status.source === 'environment'
            ? 'is configured in the environment (GITHUB_APP_ID)'
            : 'was registered through this page'}
          .{installed ? ' Thank you for installing it.' : ''}
        </p>
        <a className="button primary" href={loginUrl('/')}>
          Log in with GitHub
        </a>
      </>
    );
  }
  const { app } = status;
  return (
    <>
      <p className="notice" role="status">
        The GitHub App <strong>{app.name ?? app.appId}</strong> is registered
        {app.owner ? (
          <>
            {' '}
            for <strong>{app.owner}</strong>
          </>
        ) : null}
        .{' '}
        {status.source === 'environment'
          ? 'Its credentials come from the environment (GITHUB_APP_ID and the other App settings), which win over any registered here.'
          : 'Its credentials are kept in Zekt’s store, encrypted with ZEKT_SECRET; every Zekt process uses them.'}
      </p>
      <ol className="steps">
        <li>
          {app.installUrl ? (
            <a href={app.installUrl}>Install the App on GitHub</a>
          ) : (
            'Install the App on GitHub'
          )}{' '}
          on the accounts whose repositories provide or receive events. Whoever installs it becomes a member
          of that account in Zekt.
        </li>
        <li>
          {status.installed ? (
            <>
              The App is installed.{' '}
              <a className="button primary" href={loginUrl('/')}>
                Log in with GitHub
              </a>
            </>
          ) : (
            <span className="muted">
              Once it is installed, log in here (this page notices the installation).
            </span>
          )}
        </li>
      </ol>
      {app.htmlUrl ? (
        <p className="muted">
          The App’s page on GitHub: <a href={app.htmlUrl}>{app.htmlUrl}</a>
        </p>
      ) : null}
    </>
  );
}

function NeedsSetupCode() {
  return (
    <>
      <p>
        This Zekt has no GitHub App yet. To register one, open the setup URL that <code>zekt serve</code>{' '}
        printed when it started; it carries a setup code, so only whoever runs the server can register the
        App.
      </p>
      <p>
        Lost it? Run <code>zekt setup</code> on the server (with the same <code>ZEKT_SECRET</code> and store):
        it prints the same URL. Or configure an existing App with <code>GITHUB_APP_ID</code>,{' '}
        <code>GITHUB_PRIVATE_KEY</code> and <code>GITHUB_WEBHOOK_SECRET</code>.
      </p>
    </>
  );
}

/** Why registering stopped, in the words of the problem code the server sent the browser back with. */
const PROBLEMS: Record<string, { title: string; text: (githubUrl: string) => string }> = {
  invalid_setup_code: {
    title: 'That is not the setup code',
    text: () =>
      'Open the setup URL exactly as zekt serve printed it, or run zekt setup on the server to print it again.',
  },
  setup_session_required: {
    title: 'This browser has no setup session',
    text: () =>
      'Open the setup URL zekt serve printed in this browser first (a setup session lasts 2 hours), then register the App.',
  },
  invalid_setup_state: {
    title: 'GitHub sent this browser back with a state it was not given',
    text: () =>
      'The registration was started in another browser, used already, or started more than an hour ago. Nothing was registered here: start again.',
  },
  manifest_code_rejected: {
    title: 'GitHub did not hand over the App',
    text: (githubUrl) =>
      `GitHub refused the code it sent back (used, or older than an hour). GitHub may have created the App anyway: delete it under ${githubUrl}/settings/apps (or the organisation's settings), then register again.`,
  },
  github_unavailable: {
    title: 'GitHub did not answer',
    text: () => 'Zekt could not reach GitHub to fetch the App it registered. Register again in a moment.',
  },
};

function SetupProblem({ code, status }: { code: string; status: SetupStatus }) {
  const problem = PROBLEMS[code] ?? {
    title: 'Registering the App failed',
    text: () => `Zekt answered ${code}.`,
  };
  return (
    <div className="error-state" role="alert">
      <p className="error-title">{problem.title}</p>
      <p>
        {problem.text(status.githubUrl)} <code className="code">{code}</code>
      </p>
      <a className="button" href="/setup">
        {status.setupSession ? 'Register again' : 'Back to setup'}
      </a>
    </div>
  );
}

/** Posts the manifest to GitHub as the browser's own form submission (GitHub's manifest flow). */
function postToGitHub(action: string, manifest: string): void {
  const form = document.createElement('form');
  form.method = 'post';
  form.action = action;
  const field = document.createElement('input');
  field.type = 'hidden';
  field.name = 'manifest';
  field.value = manifest;
  form.append(field);
  document.body.append(form);
  form.submit();
}

const ACCOUNTS = [
  ['user', 'My personal account'],
  ['organization', 'An organisation I own'],
] as const;

function RegisterApp({ status }: { status: SetupStatus }) {
  const [name, setName] = useState(status.defaultName);
  const [account, setAccount] = useState<'user' | 'organization'>('user');
  const [organization, setOrganization] = useState('');
  const [isPublic, setPublic] = useState(true);
  const [errors, setErrors] = useState<{ name?: string; organization?: string }>({});
  const register = useAction(async () => {
    const started = await ok(
      api.POST('/api/setup/manifest', {
        body: {
          account,
          name: name.trim(),
          public: isPublic,
          ...(account === 'organization' ? { organization: organization.trim() } : {}),
        },
      }),
    );
    postToGitHub(started.action, started.manifest);
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found: typeof errors = {};
    if (!/[A-Za-z0-9]/.test(name) || name.trim().length > 34)
      found.name = 'Use 1–34 characters, with a letter or digit.';
    if (
      account === 'organization' &&
      !/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$/.test(organization.trim())
    )
      found.organization = 'Give the organisation’s login, e.g. acme.';
    setErrors(found);
    if (Object.keys(found).length === 0) void register.run();
  };

  return (
    <>
      <p>
        Register Zekt’s GitHub App on <a href={status.githubUrl}>{status.githubUrl}</a>. GitHub shows what the
        App asks for and creates it; Zekt then keeps its key, webhook secret and login credentials in its
        store, encrypted with <code>ZEKT_SECRET</code>. The App gets:
      </p>
      <ul>
        <li>
          <strong>Contents: write</strong> — to send <code>repository_dispatch</code> events to consumer
          repositories
        </li>
        <li>
          <strong>Actions: write</strong> — to deliver by <code>workflow_dispatch</code> and read workflow
          runs
        </li>
        <li>
          <strong>Webhooks: write</strong> — to place the webhooks of provider and completion-tracking
          repositories
        </li>
        <li>
          <strong>Metadata: read</strong> — every App has it
        </li>
      </ul>
      <form className="form" aria-label="Register the GitHub App" onSubmit={submit} noValidate>
        <Field label="App name" hint="Unique on GitHub, at most 34 characters." error={errors.name}>
          <input value={name} onChange={(event) => setName(event.target.value)} maxLength={100} />
        </Field>
        <fieldset className="field">
          <legend>Register it for</legend>
          {ACCOUNTS.map(([value, label]) => (
            <label className="choice" key={value}>
              <input
                type="radio"
                name="account"
                checked={account === value}
                onChange={() => setAccount(value)}
              />{' '}
              {label}
            </label>
          ))}
        </fieldset>
        {account === 'organization' ? (
          <Field label="Organisation" error={errors.organization}>
            <input value={organization} onChange={(event) => setOrganization(event.target.value)} />
          </Field>
        ) : null}
        <div className="field">
          <label className="choice">
            <input type="checkbox" checked={isPublic} onChange={(event) => setPublic(event.target.checked)} />{' '}
            Public: any account may install it
          </label>
          <p className="hint muted">
            A private App can be installed only on the account that owns it. Keep it public when providers and
            consumers are different organisations or people; make it private when they all belong to this one.
          </p>
        </div>
        <InlineError error={register.error} />
        <div className="form-actions">
          <button type="submit" className="primary" disabled={register.pending}>
            Register on GitHub
          </button>
        </div>
      </form>
    </>
  );
}
