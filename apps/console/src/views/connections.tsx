import { useState } from 'react';
import { allPages, api, type Connection, type ConnectionPage, ok } from '../api/client';
import { Badge, HealthBadge } from '../components/badge';
import { BarChart } from '../components/chart';
import { Page } from '../components/page';
import { Empty, QueryView } from '../components/states';
import { Table } from '../components/table';
import { Time } from '../components/time';
import { formatPercent } from '../format';
import { useQuery } from '../hooks/use-query';
import { Link } from '../router';
import { useSession } from '../session';
import { RecoverButton } from './recovery';

/**
 * My Connections: every connection the user is a party to, with its health (the seed's rule),
 * success rate, last event, quick statistics, its success rate per day, and diagnostics. Live:
 * it reads the connections again every few seconds.
 */
export function ConnectionsView() {
  const connections = useQuery(
    ['connections'],
    async () => {
      let thresholds: ConnectionPage['thresholds'] | undefined;
      const items = await allPages(async (cursor) => {
        const page = await ok(
          api.GET('/api/v1/connections', {
            params: { query: { limit: '100', ...(cursor ? { cursor } : {}) } },
          }),
        );
        thresholds = page.thresholds;
        return { items: page.connections, nextCursor: page.nextCursor };
      });
      return { items, thresholds: thresholds! };
    },
    { pollMs: 5_000 },
  );
  return (
    <Page title="My Connections" updatedAt={connections.updatedAt}>
      <QueryView query={connections} what="connections">
        {({ items, thresholds }) => (
          <>
            <details className="explain">
              <summary>How health is computed</summary>
              <p>
                Over the deliveries of the last {thresholds.windowHours} hours, success rate = (Completed +
                Confirmed) / all; a non-durable delivery counts once GitHub accepted it.{' '}
                <strong>Healthy</strong>: at least {thresholds.healthyPercent}% and a delivery within{' '}
                {thresholds.recentActivityDays} days. <strong>Warning</strong>: {thresholds.warningPercent}%
                up to {thresholds.healthyPercent}%, or nothing for {thresholds.recentActivityDays} days.{' '}
                <strong>Critical</strong>: below {thresholds.warningPercent}%. A connection that never carried
                an event counts as Healthy; it shows as <em>No data</em>.
              </p>
            </details>
            {items.length === 0 ? (
              <Empty title="No connections yet.">
                A connection is an approved subscription. Consumers request access in the{' '}
                <Link to="/directory">Directory</Link>; providers approve it under{' '}
                <Link to="/provider/subscribers">Subscribers</Link>.
              </Empty>
            ) : (
              <ul className="cards" aria-label="Connections">
                {items.map((connection) => (
                  <ConnectionCard key={connection.id} connection={connection} />
                ))}
              </ul>
            )}
          </>
        )}
      </QueryView>
    </Page>
  );
}

function ConnectionCard({ connection: c }: { connection: Connection }) {
  const me = useSession();
  const [open, setOpen] = useState(false);
  // The deliveries of a connection are listed on the caller's side of it.
  const side = me.accounts.some((a) => a.login === c.consumer.account) ? 'consumer' : 'provider';
  const drawerId = `diagnostics-${c.id}`;
  return (
    <li className="card connection">
      <div className="summary-head">
        <h2 className="inline">{c.service.slug}</h2>
        <HealthBadge health={c.health} hasEvents={c.hasEvents} />
        {c.status !== 'approved' ? <Badge tone="neutral">{c.status}</Badge> : null}
        <Badge tone={c.durable ? 'info' : 'neutral'}>{c.durable ? 'Durable' : 'Non-durable'}</Badge>
      </div>
      <p className="muted">
        {c.provider.repository} → {c.consumer.repository}
      </p>
      {!c.hasEvents ? (
        <p className="small muted">No events yet: counts as Healthy until the first delivery.</p>
      ) : null}
      <dl className="stats">
        <div>
          <dt>Success rate (24 h)</dt>
          <dd>{formatPercent(c.successRate)}</dd>
        </div>
        <div>
          <dt>Last event</dt>
          <dd>
            <Time iso={c.lastEventAt} />
          </dd>
        </div>
        <div>
          <dt>Deliveries (24 h)</dt>
          <dd>
            {c.stats.last24h.total} · {c.stats.last24h.succeeded} ok · {c.stats.last24h.failed} failed
          </dd>
        </div>
        <div>
          <dt>Deliveries (7 days)</dt>
          <dd>{c.stats.last7d.total}</dd>
        </div>
        <div>
          <dt>Waiting for GitHub</dt>
          <dd>{c.stats.pending}</dd>
        </div>
      </dl>
      <History connectionId={c.id} lastEventAt={c.lastEventAt} />
      <div className="row-actions">
        <button type="button" aria-expanded={open} aria-controls={drawerId} onClick={() => setOpen(!open)}>
          Diagnostics
          <span className="sr-only">
            {' '}
            of {c.service.slug} to {c.consumer.repository}
          </span>
        </button>
        <Link to={`/${side}/deliveries?connection=${c.id}`}>
          Deliveries
          <span className="sr-only">
            {' '}
            of {c.service.slug} to {c.consumer.repository}
          </span>
        </Link>
        {c.status === 'approved' ? <RecoverButton connection={c} /> : null}
      </div>
      {open ? <DiagnosticsDrawer id={drawerId} connectionId={c.id} /> : null}
    </li>
  );
}

/** Success rate per day over two weeks; re-read when a new event arrives. */
function History({ connectionId, lastEventAt }: { connectionId: string; lastEventAt: string | null }) {
  const history = useQuery(['connections', connectionId, 'history', lastEventAt], () =>
    ok(
      api.GET('/api/v1/connections/{id}/history', {
        params: { path: { id: connectionId }, query: { days: '14' } },
      }),
    ),
  );
  if (!history.data) return null;
  return (
    <BarChart
      title="Success rate per day, last 14 days"
      max={100}
      bars={history.data.days.map((day) => ({
        label: day.day.slice(5),
        value: day.successRate,
        tone:
          day.successRate === null
            ? 'neutral'
            : day.successRate >= 98
              ? 'ok'
              : day.successRate >= 90
                ? 'warn'
                : 'bad',
        text:
          day.total === 0
            ? `${day.day}: no deliveries`
            : `${day.day}: ${day.successRate}% of ${day.total} (${day.failed} failed)`,
      }))}
    />
  );
}

function DiagnosticsDrawer({ id, connectionId }: { id: string; connectionId: string }) {
  const diagnostics = useQuery(['connections', connectionId, 'diagnostics'], () =>
    ok(api.GET('/api/connections/{id}/diagnostics', { params: { path: { id: connectionId } } })),
  );
  return (
    <section id={id} className="drawer" aria-label="Diagnostics">
      <QueryView query={diagnostics} what="diagnostics">
        {(d) => (
          <>
            <h3>Failed attempts, last {d.window.days} days</h3>
            <Table
              label="Failure categories"
              rows={[
                ...Object.entries(d.categories).map(([name, count]) => ({ name, count, quiet: count === 0 })),
                { name: 'consumer workflow failed', count: d.consumerFailures, quiet: false },
              ]}
              rowKey={(row) => row.name}
              rowClassName={(row) => (row.quiet ? 'muted' : undefined)}
              cells={(row) => (
                <>
                  <th scope="row">{row.name}</th>
                  <td className="number">{row.count}</td>
                </>
              )}
            />
            <h3>Last failures</h3>
            {d.recentFailures.length === 0 ? (
              <p className="muted">No failed attempts.</p>
            ) : (
              <ul className="plain failures">
                {d.recentFailures.map((f) => (
                  <li key={`${f.deliveryId}-${f.attempt}`}>
                    <Time iso={f.at} /> · {f.status ?? 'no answer'} {f.category} ·{' '}
                    <Link to={`/deliveries/${f.deliveryId}`}>
                      attempt {f.attempt} of {f.deliveryId}
                    </Link>
                    <div className="message">{f.message}</div>
                  </li>
                ))}
              </ul>
            )}
            <h3>Recommendations</h3>
            {d.recommendations.length === 0 ? (
              <p className="muted">Nothing to do.</p>
            ) : (
              <ul className="plain">
                {d.recommendations.map((r) => (
                  <li key={r.category}>
                    <strong>{r.category}</strong>: {r.text}
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </QueryView>
    </section>
  );
}
