import { type FormEvent, useRef, useState } from 'react';
import {
  allPages,
  api,
  type Blocked,
  type Connection,
  type Delivery,
  type DeliveryQuery,
  ok,
} from '../api/client';
import { DeliveryBadge, NotStartedBadge } from '../components/badge';
import { InlineField } from '../components/field';
import { Page } from '../components/page';
import { Empty, QueryView } from '../components/states';
import { Table } from '../components/table';
import { Time } from '../components/time';
import { formatClock, formatPercent, webUrl } from '../format';
import { useQuery } from '../hooks/use-query';
import { Link, setQuery, useLocation } from '../router';
import { useSession } from '../session';
import { SchemaViolationsCard } from './schema-violations';

const PAGE = 50;
const STATUSES = ['Dispatched', 'Confirmed', 'Completed', 'Failed'];
const FILTERS = ['connection', 'status', 'repository', 'since', 'until', 'runId'] as const;
type Filter = (typeof FILTERS)[number];
const FILTER_LABELS: Record<Filter, string> = {
  connection: 'Connection',
  status: 'Status',
  repository: 'Repository',
  since: 'From',
  until: 'To',
  runId: 'Run',
};

/** A date input's day as the start of that day in the user's time zone, in ISO form. */
function dayStart(day: string, plusDays = 0): string | undefined {
  const date = new Date(`${day}T00:00:00`);
  if (Number.isNaN(date.getTime())) return undefined;
  date.setDate(date.getDate() + plusDays);
  return date.toISOString();
}

/**
 * Delivery Status (provider and consumer): every delivery of the user's connections on one side,
 * newest first, with its status badge, Confirmed and Completed times and retry number (0 = GitHub
 * accepted the first attempt). Filters live in the URL (shareable, and shown as removable chips);
 * the list refreshes itself every few seconds; "Load older" pages back.
 */
export function DeliveryStatusView({ side }: { side: 'provider' | 'consumer' }) {
  const { query } = useLocation();
  const filters = Object.fromEntries(FILTERS.map((f) => [f, query.get(f) ?? ''])) as Record<Filter, string>;
  const wanted = useRef(PAGE);
  const [more, setMore] = useState(false);
  const connections = useQuery(['connections', side], () =>
    allPages(async (cursor) => {
      const page = await ok(
        api.GET('/api/v1/connections', {
          params: { query: { role: side, limit: '100', ...(cursor ? { cursor } : {}) } },
        }),
      );
      return { items: page.connections, nextCursor: page.nextCursor };
    }),
  );
  const deliveries = useQuery(
    ['deliveries', side, filters],
    async () => {
      const base: DeliveryQuery = { side };
      if (filters.connection) base.connection = filters.connection;
      if (filters.status) base.status = filters.status;
      if (filters.repository) base.repository = filters.repository;
      if (filters.runId) base.runId = filters.runId;
      const since = filters.since ? dayStart(filters.since) : undefined;
      const until = filters.until ? dayStart(filters.until, 1) : undefined;
      if (since) base.since = since;
      if (until) base.until = until;
      // Live updates re-read every page shown, so nothing slips between pages as new deliveries arrive.
      const shown: Delivery[] = [];
      let cursor: string | undefined;
      let hasMore = false;
      while (shown.length < wanted.current) {
        const page = await ok(
          api.GET('/api/v1/deliveries', {
            params: {
              query: {
                ...base,
                limit: String(Math.min(100, wanted.current - shown.length)),
                ...(cursor ? { cursor } : {}),
              },
            },
          }),
        );
        shown.push(...page.deliveries);
        hasMore = page.nextCursor !== null;
        if (!page.nextCursor) break;
        cursor = page.nextCursor;
      }
      setMore(hasMore);
      return shown;
    },
    { pollMs: 5_000 },
  );

  const active = FILTERS.filter((f) => filters[f]);
  const connectionName = (id: string) => {
    const c = connections.data?.find((x) => x.id === id);
    return c ? `${c.service.slug} → ${c.consumer.repository}` : id;
  };

  return (
    <Page
      title="Delivery Status"
      intro={
        side === 'provider'
          ? 'Deliveries of your services’ runs to their subscribers.'
          : 'Deliveries to your repositories from the services you subscribe to.'
      }
      updatedAt={deliveries.updatedAt}
    >
      {side === 'provider' ? <BlockedCards /> : null}
      {side === 'provider' ? <SchemaViolationsCard /> : null}
      <Filters side={side} filters={filters} connections={connections.data ?? []} />
      {active.length > 0 ? (
        <ul className="chips" aria-label="Active filters">
          {active.map((f) => {
            const value = f === 'connection' ? connectionName(filters[f]) : filters[f];
            return (
              <li key={f}>
                {FILTER_LABELS[f]}: {value}{' '}
                <button
                  type="button"
                  aria-label={`Remove filter ${FILTER_LABELS[f]}: ${value}`}
                  onClick={() => setQuery({ [f]: undefined })}
                >
                  ×
                </button>
              </li>
            );
          })}
        </ul>
      ) : null}
      <QueryView query={deliveries} what="deliveries">
        {(list) =>
          list.length === 0 ? (
            <Empty title={active.length > 0 ? 'No delivery matches these filters.' : 'No deliveries yet.'}>
              {active.length > 0
                ? 'Remove a filter to see more.'
                : side === 'provider'
                  ? 'Deliveries appear when a whitelisted workflow with approved subscribers finishes a run.'
                  : 'Deliveries appear when a service you subscribe to finishes a run. Request access in the Directory.'}
            </Empty>
          ) : (
            <>
              <DeliveryTable deliveries={list} />
              {more ? (
                <button
                  type="button"
                  className="load-more"
                  disabled={deliveries.loading}
                  onClick={() => {
                    wanted.current += PAGE;
                    deliveries.reload();
                  }}
                >
                  {deliveries.loading ? 'Loading…' : 'Load older'}
                </button>
              ) : null}
            </>
          )
        }
      </QueryView>
    </Page>
  );
}

function Filters({
  side,
  filters,
  connections,
}: {
  side: string;
  filters: Record<Filter, string>;
  connections: Connection[];
}) {
  const [runId, setRunId] = useState(filters.runId);
  const repositories = [
    ...new Set(
      connections
        .flatMap((c) => [c.provider.repository, c.consumer.repository])
        .filter((r): r is string => !!r),
    ),
  ].sort();
  const search = (event: FormEvent) => {
    event.preventDefault();
    setQuery({ runId: runId.trim() || undefined });
  };
  return (
    <div className="filters">
      <InlineField label="Connection">
        <select value={filters.connection} onChange={(event) => setQuery({ connection: event.target.value })}>
          <option value="">All</option>
          {connections.map((c) => (
            <option key={c.id} value={c.id}>
              {c.service.slug} → {c.consumer.repository}
            </option>
          ))}
        </select>
      </InlineField>
      <InlineField label="Status">
        <select value={filters.status} onChange={(event) => setQuery({ status: event.target.value })}>
          <option value="">All</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </InlineField>
      <InlineField label="Repository">
        <select value={filters.repository} onChange={(event) => setQuery({ repository: event.target.value })}>
          <option value="">All</option>
          {repositories.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </InlineField>
      <InlineField label="From">
        <input
          type="date"
          value={filters.since}
          onChange={(event) => setQuery({ since: event.target.value })}
        />
      </InlineField>
      <InlineField label="To">
        <input
          type="date"
          value={filters.until}
          onChange={(event) => setQuery({ until: event.target.value })}
        />
      </InlineField>
      <search aria-label={`Search ${side} deliveries by run`}>
        <form onSubmit={search} className="inline-form">
          <InlineField label="Run id">
            <input
              type="search"
              inputMode="numeric"
              value={runId}
              onChange={(event) => setRunId(event.target.value)}
              placeholder="provider run_id"
            />
          </InlineField>
          <button type="submit">Search</button>
        </form>
      </search>
    </div>
  );
}

/** Whether a delivery is flagged not started and has not moved on since. */
export function isNotStarted(delivery: Delivery): boolean {
  return delivery.notStartedAt !== null && delivery.deliveryStatus === 'Dispatched';
}

/** What to do about a delivery no workflow started for: the workflow GitHub would have run. */
export function notStartedAdvice(delivery: Delivery): string {
  return `GitHub accepted it, but no workflow run started. The consumer workflow must exist on the default branch of ${delivery.consumer.repository ?? 'the consumer repository'} with on: repository_dispatch: types: [${delivery.eventType}]; then replay it.`;
}

/** What GitHub has done with a delivery so far, in words. */
export function dispatchState(delivery: Delivery): string | null {
  if (delivery.dispatch.state === 'pending') {
    const next = delivery.dispatch.nextAttemptAt;
    return `Not accepted by GitHub yet${next ? ` · next attempt at ${formatClock(new Date(next))}` : ''}`;
  }
  if (delivery.dispatch.state === 'failed')
    return `GitHub did not accept it (${delivery.failureReason ?? 'failed'})`;
  const reason = delivery.failureReason;
  if (delivery.deliveryStatus === 'Failed' && reason?.startsWith(CONSUMER_RUN_FAILURE)) {
    const how = reason.slice(CONSUMER_RUN_FAILURE.length).replaceAll('_', ' ');
    return how === 'deleted' ? 'The consumer run was deleted' : `The consumer run ended: ${how}`;
  }
  return null;
}

/** The failure reasons of a consumer run that did not succeed: `consumer_run_<conclusion>`. */
const CONSUMER_RUN_FAILURE = 'consumer_run_';

/** The consumer workflow run of a `workflow_dispatch` delivery, linked to its page on GitHub. */
export function ConsumerRunLink({ delivery }: { delivery: Delivery }) {
  const run = delivery.consumerRun;
  if (!run) return null;
  const href = webUrl(run.htmlUrl);
  const text = `run ${run.id}`;
  return href ? (
    <a
      href={href}
      rel="noreferrer"
      aria-label={`Consumer run ${run.id} of ${delivery.consumer.repository ?? 'the consumer repository'}`}
    >
      {text}
    </a>
  ) : (
    <span>{text}</span>
  );
}

function DeliveryTable({ deliveries }: { deliveries: Delivery[] }) {
  return (
    <Table
      label="Deliveries"
      className="deliveries"
      rows={deliveries}
      rowKey={(d) => d.deliveryId}
      columns={[
        { header: 'Status', cell: (d) => <DeliveryState delivery={d} /> },
        {
          header: 'Event type',
          cell: (d) => (
            <Link to={`/deliveries/${d.deliveryId}`} aria-label={`${d.eventType}, delivery ${d.deliveryId}`}>
              {d.eventType}
            </Link>
          ),
        },
        {
          header: 'Provider run',
          cell: (d) => (
            <>
              {d.provider.repository} #{d.correlationId}
            </>
          ),
        },
        {
          header: 'Delivers to',
          cell: (d) => (
            <>
              {d.consumer.repository}
              {d.consumerRun ? (
                <div className="small">
                  <ConsumerRunLink delivery={d} />
                </div>
              ) : null}
            </>
          ),
        },
        { header: 'Dispatched', cell: (d) => <Time iso={d.dispatchedAt} /> },
        { header: 'Confirmed', cell: (d) => <Time iso={d.confirmedAt} /> },
        { header: 'Completed', cell: (d) => <Time iso={d.completedAt} /> },
        {
          header: 'Retry',
          title: 'Failed dispatch attempts before GitHub accepted it (0 = first try)',
          className: 'number',
          cell: (d) => d.retryNumber,
        },
      ]}
    />
  );
}

/** The Status cell: the badge, why a delivery has not started, where its dispatch stands, a replay. */
function DeliveryState({ delivery: d }: { delivery: Delivery }) {
  const state = dispatchState(d);
  return (
    <>
      <DeliveryBadge status={d.deliveryStatus} />
      {isNotStarted(d) ? (
        <>
          {' '}
          <NotStartedBadge />
          <div className="small muted state">{notStartedAdvice(d)}</div>
        </>
      ) : null}
      {state ? <div className="small muted state">{state}</div> : null}
      {d.isReplay ? <div className="small muted">replay</div> : null}
    </>
  );
}

/** The provider's blocked-events card: allowed, blocked, block rate, orphaned messages, top workflows. */
function BlockedCards() {
  const me = useSession();
  const blocked = useQuery(['blocked'], () =>
    Promise.all(
      me.accounts.map((a) => ok(api.GET('/api/v1/blocked', { params: { query: { account: a.login } } }))),
    ),
  );
  return (
    <QueryView query={blocked} what="blocked events">
      {(cards) => (
        <div className="cards-row">
          {cards.map((card) => (
            <BlockedCard key={card.account} card={card} />
          ))}
        </div>
      )}
    </QueryView>
  );
}

function BlockedCard({ card }: { card: Blocked }) {
  return (
    <section className="card blocked" aria-label={`Blocked events of ${card.account}`}>
      <h2>Blocked events · {card.account}</h2>
      <dl className="stats">
        <div>
          <dt>Allowed</dt>
          <dd>{card.allowedEvents}</dd>
        </div>
        <div>
          <dt>Blocked</dt>
          <dd>{card.blockedEvents}</dd>
        </div>
        <div>
          <dt>Block rate</dt>
          <dd>{formatPercent(card.blockRate)}</dd>
        </div>
        <div>
          <dt>Orphaned messages</dt>
          <dd>{card.orphanedMessages}</dd>
        </div>
      </dl>
      {card.topWorkflows.length > 0 ? (
        <>
          <h3>Top blocked workflows</h3>
          <ul className="plain">
            {card.topWorkflows.map((w) => (
              <li key={`${w.repository}/${w.workflow}`}>
                {w.repository} · {w.workflow}: {w.blocked}{' '}
                <Link to={`/provider/workflows?repo=${encodeURIComponent(w.repository)}`}>
                  Whitelist<span className="sr-only"> {w.workflow}</span>
                </Link>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p className="muted small">
          No blocked runs this month. Runs of workflows that are not whitelisted are blocked and still
          counted.
        </p>
      )}
    </section>
  );
}
