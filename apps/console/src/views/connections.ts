import { api, type Connection, type Diagnostics } from '../api.js';
import { badge, h, replaceChildren, when } from '../dom.js';

/** My Connections: every connection of the caller's accounts with its health and quick statistics. */
export async function renderConnections(main: HTMLElement): Promise<void> {
  const { connections } = await api<{ connections: Connection[] }>('GET', '/api/v1/connections');
  const detail = h('section', { id: 'diagnostics' });
  replaceChildren(
    main,
    h('h1', {}, 'My Connections'),
    connections.length === 0
      ? h('p', { class: 'muted' }, 'No connections yet: request access to a service in the directory.')
      : h(
          'div',
          { class: 'cards' },
          connections.map((c) =>
            h(
              'article',
              { class: 'card', 'data-connection': c.id },
              h('h3', {}, `${c.service.slug}`),
              h('p', {}, badge(c.health), c.successRate === null ? null : ` ${c.successRate}% in 24 h`),
              h('p', { class: 'stat' }, `${c.provider.repository} → ${c.consumer.repository}`),
              h(
                'p',
                { class: 'stat' },
                `${c.stats.last24h.total} in 24 h (${c.stats.last24h.failed} failed) · ${c.stats.last7d.total} in 7 days · ${c.stats.pending} pending`,
              ),
              h(
                'p',
                { class: 'stat' },
                `last event ${when(c.lastEventAt)} · ${c.durable ? 'durable' : 'not durable'}`,
              ),
              h(
                'p',
                {},
                h(
                  'a',
                  { href: `/deliveries?connection=${encodeURIComponent(c.id)}`, 'data-link': true },
                  'Deliveries',
                ),
                ' · ',
                h(
                  'button',
                  { type: 'button', onclick: () => void showDiagnostics(detail, c.id) },
                  'Diagnostics',
                ),
              ),
            ),
          ),
        ),
    detail,
  );
}

async function showDiagnostics(section: HTMLElement, id: string): Promise<void> {
  const d = await api<Diagnostics>('GET', `/api/connections/${encodeURIComponent(id)}/diagnostics`);
  const failing = Object.entries(d.categories).filter(([, n]) => n > 0);
  replaceChildren(
    section,
    h('h2', {}, 'Diagnostics (30 days)'),
    h('p', {}, badge(d.health)),
    failing.length === 0
      ? h('p', { class: 'muted' }, 'No failed attempts.')
      : h(
          'ul',
          { 'aria-label': 'Failure categories' },
          failing.map(([category, n]) => h('li', {}, `${category}: ${n}`)),
        ),
    d.recommendations.length === 0
      ? null
      : h(
          'div',
          {},
          h('h2', {}, 'What to do'),
          h(
            'ul',
            { 'aria-label': 'Recommendations' },
            d.recommendations.map((r) => h('li', {}, r.text)),
          ),
        ),
    d.recentFailures.length === 0
      ? null
      : h(
          'div',
          {},
          h('h2', {}, 'Last failures'),
          h(
            'table',
            { 'aria-label': 'Last failures' },
            h(
              'tbody',
              {},
              d.recentFailures.map((f) =>
                h(
                  'tr',
                  {},
                  h('td', {}, when(f.at)),
                  h('td', {}, f.category),
                  h('td', {}, f.status === null ? '—' : String(f.status)),
                  h('td', {}, f.message),
                ),
              ),
            ),
          ),
        ),
  );
}
