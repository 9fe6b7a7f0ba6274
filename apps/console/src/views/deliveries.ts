import { type ApiError, api, type Delivery } from '../api.js';
import { badge, h, replaceChildren, when } from '../dom.js';

const STATUSES = ['', 'Dispatched', 'Confirmed', 'Completed', 'Failed'] as const;

/**
 * Delivery Status: every delivery of the caller's connections, newest first, with the seed's
 * columns (status badge, Confirmed and Completed, retry number); a row opens its record with every
 * attempt, and offers replay while the archive exists.
 */
export async function renderDeliveries(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const status = params.get('status') ?? '';
  const connection = params.get('connection') ?? '';
  const query = new URLSearchParams({ limit: '50' });
  if (status) query.set('status', status);
  if (connection) query.set('connection', connection);
  const page = await api<{ deliveries: Delivery[]; nextCursor: string | null }>(
    'GET',
    `/api/v1/deliveries?${query}`,
  );
  const detail = h('section', { id: 'delivery-detail' });
  const filter = h(
    'select',
    {
      'aria-label': 'Status',
      onchange: (event: Event) => {
        const next = new URLSearchParams(params);
        const value = (event.target as HTMLSelectElement).value;
        if (value) next.set('status', value);
        else next.delete('status');
        navigate(`/deliveries?${next}`);
      },
    },
    STATUSES.map((s) => h('option', { value: s, selected: s === status }, s || 'All statuses')),
  );
  replaceChildren(
    main,
    h('h1', {}, 'Delivery Status'),
    h('p', {}, filter, connection ? h('span', { class: 'muted' }, ` connection ${connection}`) : null),
    page.deliveries.length === 0
      ? h('p', { class: 'muted' }, 'No deliveries yet.')
      : h(
          'table',
          { 'aria-label': 'Deliveries' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Status', 'Event', 'From', 'To', 'Dispatched', 'Confirmed', 'Completed', 'Retry'].map((t) =>
                h('th', {}, t),
              ),
            ),
          ),
          h(
            'tbody',
            {},
            page.deliveries.map((d) =>
              h(
                'tr',
                { 'data-delivery': d.deliveryId },
                h('td', {}, badge(d.deliveryStatus)),
                h(
                  'td',
                  {},
                  h(
                    'a',
                    {
                      href: `#${d.deliveryId}`,
                      onclick: (event: Event) => {
                        event.preventDefault();
                        void showDelivery(detail, d.deliveryId);
                      },
                    },
                    d.eventType,
                  ),
                ),
                h('td', {}, `${d.provider.repository} #${d.correlationId}`),
                h('td', {}, d.consumer.repository),
                h('td', {}, when(d.dispatchedAt)),
                h('td', {}, when(d.confirmedAt)),
                h('td', {}, when(d.completedAt)),
                h('td', {}, String(d.retryNumber)),
              ),
            ),
          ),
        ),
    page.nextCursor ? h('p', { class: 'muted' }, 'Showing the newest 50.') : null,
    detail,
  );
}

async function showDelivery(section: HTMLElement, deliveryId: string): Promise<void> {
  const d = await api<Delivery>('GET', `/api/v1/deliveries/${encodeURIComponent(deliveryId)}`);
  const message = h('div', {});
  replaceChildren(
    section,
    h('h2', {}, `Delivery ${d.deliveryId}`),
    h(
      'p',
      {},
      badge(d.deliveryStatus),
      ` ${d.durable ? 'durable' : 'not durable'} · retry ${d.retryNumber}`,
      d.consumerWorkflowConclusion ? ` · consumer run: ${d.consumerWorkflowConclusion}` : null,
      d.failureReason ? ` · ${d.failureReason}` : null,
      d.replayOf ? ` · replay of ${d.replayOf}` : null,
      d.replayedBy ? ` · replayed by ${d.replayedBy}` : null,
    ),
    h(
      'table',
      { 'aria-label': 'Attempts' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['#', 'At', 'Outcome', 'Status', 'Category', 'Message'].map((t) => h('th', {}, t)),
        ),
      ),
      h(
        'tbody',
        {},
        (d.attempts ?? []).map((a) =>
          h(
            'tr',
            {},
            h('td', {}, String(a.number)),
            h('td', {}, when(a.at)),
            h('td', {}, a.outcome),
            h('td', {}, a.status === null ? '—' : String(a.status)),
            h('td', {}, a.category ?? '—'),
            h('td', {}, a.message ?? ''),
          ),
        ),
      ),
    ),
    h(
      'p',
      {},
      h(
        'button',
        {
          type: 'button',
          onclick: async () => {
            try {
              const replay = await api<Delivery>('POST', `/api/replay/${encodeURIComponent(d.deliveryId)}`);
              replaceChildren(message, h('div', { class: 'notice' }, `Replayed as ${replay.deliveryId}.`));
            } catch (error) {
              replaceChildren(message, h('div', { class: 'error' }, (error as ApiError).message));
            }
          },
        },
        'Replay',
      ),
    ),
    message,
  );
}

export function navigate(path: string): void {
  history.pushState(null, '', path);
  window.dispatchEvent(new PopStateEvent('popstate'));
}
