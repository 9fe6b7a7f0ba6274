import { type FormEvent, useState } from 'react';
import { STALE_AFTER } from '../api/changes';
import { type Answer, api, ok } from '../api/client';
import { Badge, type Tone } from '../components/badge';
import { Field } from '../components/field';
import { Modal } from '../components/modal';
import { Page } from '../components/page';
import { Empty, InlineError, QueryView } from '../components/states';
import { headers, QueryTable, Table } from '../components/table';
import { Time } from '../components/time';
import { formatClock } from '../format';
import { useAction } from '../hooks/use-action';
import { useQuery } from '../hooks/use-query';

type Checks = Answer<'/api/v1/checks', 'get'>;
type ApiToken = Answer<'/api/v1/tokens', 'get'>['tokens'][number];
type CreatedToken = Answer<'/api/v1/tokens', 'post'>;

const CHECK_STATUS: Record<Checks['checks'][number]['status'], { label: string; tone: Tone }> = {
  passed: { label: '✔ Passed', tone: 'ok' },
  failed: { label: '✘ Failed', tone: 'bad' },
  skipped: { label: '– Skipped', tone: 'neutral' },
};

/** Expiries offered for a new token, in days; the API takes any time up to 366 days ahead. */
const EXPIRIES = [7, 30, 90, 365];

/**
 * Settings: the service checks of `zekt doctor` as this server sees them (what concerns other
 * accounts is left out), and the person's own API tokens — created with a name and an expiry, the
 * secret shown once, revoked at once.
 */
export function SettingsView() {
  return (
    <Page
      title="Settings"
      intro="The checks an operator runs with zekt doctor, as this server sees them, and your API tokens for scripts and the zekt command."
    >
      <ServiceChecks />
      <ApiTokens />
    </Page>
  );
}

function ServiceChecks() {
  const checks = useQuery(['checks'], () => ok(api.GET('/api/v1/checks')));
  return (
    <section aria-labelledby="checks-title">
      <div className="summary-head">
        <h2 id="checks-title">Service checks</h2>
        <button type="button" onClick={checks.reload} disabled={checks.loading}>
          {checks.loading ? 'Checking…' : 'Check again'}
        </button>
      </div>
      <QueryView query={checks} what="the service checks">
        {(data) => (
          <>
            <p className="muted">
              {data.ok ? 'No check failed.' : 'Some checks failed: fix them from the top.'} Checked at{' '}
              {formatClock(new Date(data.checkedAt))} (the server keeps the findings for 30 seconds).
            </p>
            <Table
              label="Service checks"
              rows={data.checks}
              rowKey={(check) => check.id}
              columns={[
                { header: 'Check', rowHeader: true, cell: (check) => check.title },
                {
                  header: 'Result',
                  cell: (check) => (
                    <Badge tone={CHECK_STATUS[check.status].tone}>{CHECK_STATUS[check.status].label}</Badge>
                  ),
                },
                { header: 'Finding', cell: (check) => check.summary },
                { header: 'Fix', cell: (check) => check.fix ?? '—' },
              ]}
            />
          </>
        )}
      </QueryView>
    </section>
  );
}

function ApiTokens() {
  const tokens = useQuery(['tokens'], () =>
    ok(api.GET('/api/v1/tokens', { params: { query: { limit: '100' } } })),
  );
  const [created, setCreated] = useState<CreatedToken | null>(null);
  return (
    <section aria-labelledby="tokens-title">
      <h2 id="tokens-title">API tokens</h2>
      <p className="muted">
        A token acts as you, for every account you are a member of: send it as Authorization: Bearer zkt_…
        Only its hash is kept, so its secret is shown once, when it is created.
      </p>
      <CreateTokenForm onCreated={setCreated} />
      {created ? <NewTokenSecret token={created} onDone={() => setCreated(null)} /> : null}
      <QueryTable
        query={tokens}
        what="your API tokens"
        rows={(data) => data.tokens}
        rowKey={(token) => token.id}
        label="Your API tokens"
        empty={<Empty title="No API tokens">Create one above for a script or the zekt command.</Empty>}
        columns={headers('Name', 'Created', 'Expires', 'Status', <span className="sr-only">Actions</span>)}
        cells={(token) => <TokenCells token={token} />}
      />
    </section>
  );
}

function CreateTokenForm({ onCreated }: { onCreated: (token: CreatedToken) => void }) {
  const [name, setName] = useState('');
  const [days, setDays] = useState('30');
  const [checked, setChecked] = useState(false);
  const nameProblem = name.trim() === '' ? 'Give the token a name: what it is for.' : undefined;
  const create = useAction(
    async () => {
      const expiresAt = new Date(Date.now() + Number(days) * 86_400_000).toISOString();
      const token = await ok(api.POST('/api/v1/tokens', { body: { name: name.trim(), expiresAt } }));
      setName('');
      setChecked(false);
      onCreated(token);
      return token;
    },
    { invalidates: STALE_AFTER.token },
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (!nameProblem) void create.run();
  };
  return (
    <form className="form" onSubmit={submit} noValidate aria-label="Create an API token">
      <Field
        label="Name"
        hint="What the token is for, e.g. release pipeline (at most 100 characters)."
        error={checked ? nameProblem : undefined}
      >
        <input value={name} maxLength={100} onChange={(event) => setName(event.target.value)} />
      </Field>
      <Field label="Expires in">
        <select value={days} onChange={(event) => setDays(event.target.value)}>
          {EXPIRIES.map((d) => (
            <option key={d} value={String(d)}>
              {d} days
            </option>
          ))}
        </select>
      </Field>
      <div className="form-actions">
        <button type="submit" disabled={create.pending}>
          {create.pending ? 'Creating…' : 'Create token'}
        </button>
      </div>
      <InlineError error={create.error} />
    </form>
  );
}

function NewTokenSecret({ token, onDone }: { token: CreatedToken; onDone: () => void }) {
  return (
    <div className="notice" role="status" aria-label="New API token">
      <p>
        Token <strong>{token.name}</strong> created, valid until <Time iso={token.expiresAt ?? ''} />. Copy it
        now: it is not shown again.
      </p>
      <Field label="Secret of the new token">
        <input readOnly value={token.token} onFocus={(event) => event.target.select()} className="code" />
      </Field>
      <button type="button" onClick={onDone}>
        Done, I copied it
      </button>
    </div>
  );
}

function TokenCells({ token }: { token: ApiToken }) {
  const [confirming, setConfirming] = useState(false);
  const revoke = useAction(
    async () => {
      await ok(api.DELETE('/api/v1/tokens/{tokenId}', { params: { path: { tokenId: token.id } } }));
      setConfirming(false);
    },
    { invalidates: STALE_AFTER.token },
  );
  return (
    <>
      <td>{token.name}</td>
      <td>
        <Time iso={token.createdAt} />
      </td>
      <td>{token.expiresAt ? <Time iso={token.expiresAt} /> : 'Never'}</td>
      <td>{token.expired ? <Badge tone="neutral">Expired</Badge> : <Badge tone="ok">Active</Badge>}</td>
      <td>
        <button
          type="button"
          className="danger"
          aria-label={`Revoke ${token.name}`}
          disabled={revoke.pending}
          onClick={() => setConfirming(true)}
        >
          Revoke
        </button>
        {!confirming ? <InlineError error={revoke.error} /> : null}
        <Modal
          open={confirming}
          title={`Revoke the token ${token.name}?`}
          busy={revoke.pending}
          onClose={() => setConfirming(false)}
          actions={
            <>
              <button
                type="button"
                className="danger"
                disabled={revoke.pending}
                onClick={() => void revoke.run()}
              >
                {revoke.pending ? 'Revoking…' : 'Revoke'}
              </button>
              <button type="button" disabled={revoke.pending} onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </>
          }
        >
          <p>Scripts that use it are refused from their next request on.</p>
          <InlineError error={revoke.error} />
        </Modal>
      </td>
    </>
  );
}
