import { useRef, useState } from 'react';
import { type AuditEntry, type AuditQuery, api, ok } from '../api/client';
import { InlineField } from '../components/field';
import { Page } from '../components/page';
import { Empty, QueryView } from '../components/states';
import { Table } from '../components/table';
import { Time } from '../components/time';
import { useQuery } from '../hooks/use-query';
import { Link, setQuery, useLocation } from '../router';
import { useSession } from '../session';

const PAGE = 50;

/** Each action the trail records (domain/audit.ts), in words. */
const ACTIONS: Record<string, string> = {
  'provider.switch': 'Provider switch',
  'completion_tracking.switch': 'COMPLETION switch',
  'workflow.whitelist': 'Workflow whitelist',
  'service.create': 'Service created',
  'service.update': 'Service edited',
  'service.publish': 'Service published',
  'service.unpublish': 'Service unpublished',
  'service.schema_version': 'Message schema saved',
  'service.schema_enforcement': 'Schema enforcement changed',
  'subscription.request': 'Access requested',
  'subscription.approve': 'Subscription approved',
  'subscription.deny': 'Subscription denied',
  'subscription.revoke': 'Subscription revoked',
  'subscription.withdraw': 'Request withdrawn',
  'subscription.durable': 'Durable Delivery switch',
  'subscription.delivery_mode': 'Delivered as',
  'token.create': 'API token created',
  'delivery.replay': 'Delivery replayed',
  'recovery.start': 'Recovery started',
  'recovery.cancel': 'Recovery cancelled',
};

function show(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** What changed, field by field: "durable: false → true"; a field only after is "since: …". */
function changes(entry: AuditEntry): Array<[field: string, text: string]> {
  const before = entry.before ?? {};
  const after = entry.after ?? {};
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return fields.map((field) => {
    const had = field in before;
    const has = field in after;
    if (had && has) return [field, `${show(before[field])} → ${show(after[field])}`];
    return [field, had ? `${show(before[field])} → —` : show(after[field])];
  });
}

function Target({ entry }: { entry: AuditEntry }) {
  const { type, id } = entry.target;
  if (type === 'delivery')
    return (
      <Link className="id" to={`/deliveries/${encodeURIComponent(id)}`}>
        {id}
      </Link>
    );
  if (type === 'service')
    return (
      <Link className="id" to={`/provider/services/${encodeURIComponent(id)}`}>
        {id}
      </Link>
    );
  return <span className="id">{id}</span>;
}

/**
 * Audit: who changed what on the caller's accounts, and when, newest first. The
 * filters (account, action) live in the URL like Delivery Status's; "Load older" pages back.
 */
export function AuditView() {
  const me = useSession();
  const { query } = useLocation();
  const account = query.get('account') ?? '';
  const action = query.get('action') ?? '';
  const wanted = useRef(PAGE);
  const [more, setMore] = useState(false);
  const entries = useQuery(['audit', account, action], async () => {
    const base: AuditQuery = {};
    if (account) base.account = account;
    if (action) base.action = action;
    const shown: AuditEntry[] = [];
    let cursor: string | undefined;
    let hasMore = false;
    while (shown.length < wanted.current) {
      const page = await ok(
        api.GET('/api/v1/audit', {
          params: {
            query: {
              ...base,
              limit: String(Math.min(100, wanted.current - shown.length)),
              ...(cursor ? { cursor } : {}),
            },
          },
        }),
      );
      shown.push(...page.entries);
      hasMore = page.nextCursor !== null;
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    setMore(hasMore);
    return shown;
  });
  const filtered = account !== '' || action !== '';

  return (
    <Page
      title="Audit"
      intro="Every change of configuration on your accounts — switches, whitelists, services, subscription decisions, Durable Delivery, API tokens, replays and recoveries — with who made it and when. Both sides of a subscription see its changes."
    >
      <div className="filters">
        <InlineField label="Account">
          <select value={account} onChange={(event) => setQuery({ account: event.target.value })}>
            <option value="">All</option>
            {me.accounts.map((a) => (
              <option key={a.login} value={a.login}>
                {a.login}
              </option>
            ))}
          </select>
        </InlineField>
        <InlineField label="Action">
          <select value={action} onChange={(event) => setQuery({ action: event.target.value })}>
            <option value="">All</option>
            {Object.entries(ACTIONS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </InlineField>
      </div>
      <QueryView query={entries} what="the audit trail">
        {(list) =>
          list.length === 0 ? (
            <Empty title={filtered ? 'No change matches these filters.' : 'No changes recorded yet.'}>
              {filtered
                ? 'Choose All to see more.'
                : 'Changes appear here as soon as someone on your accounts makes one: a switch, a service, a subscription decision, a replay.'}
            </Empty>
          ) : (
            <>
              <Table
                label="Audit trail"
                className="audit"
                rows={list}
                rowKey={(entry) => entry.id}
                columns={[
                  { header: 'When', className: 'when', cell: (entry) => <Time iso={entry.at} /> },
                  {
                    header: 'Who',
                    cell: (entry) => (
                      <>
                        {entry.actor.login}
                        {entry.actor.tokenId ? (
                          <div className="small muted" title={entry.actor.tokenId}>
                            with an API token
                          </div>
                        ) : null}
                      </>
                    ),
                  },
                  { header: 'Action', cell: (entry) => ACTIONS[entry.action] ?? entry.action },
                  {
                    header: 'Target',
                    cell: (entry) => (
                      <>
                        <span className="muted small">{entry.target.type}</span> <Target entry={entry} />
                      </>
                    ),
                  },
                  {
                    header: 'Change',
                    cell: (entry) => (
                      <ul className="plain changes">
                        {changes(entry).map(([field, text]) => (
                          <li key={field} className="id">
                            <span className="muted">{field}:</span> {text}
                          </li>
                        ))}
                      </ul>
                    ),
                  },
                  { header: 'Account', cell: (entry) => entry.account ?? '—' },
                ]}
              />
              {more ? (
                <button
                  type="button"
                  className="load-more"
                  disabled={entries.loading}
                  onClick={() => {
                    wanted.current += PAGE;
                    entries.reload();
                  }}
                >
                  {entries.loading ? 'Loading…' : 'Load older'}
                </button>
              ) : null}
            </>
          )
        }
      </QueryView>
    </Page>
  );
}
