import { api, type Usage } from '../api.js';
import { h, replaceChildren } from '../dom.js';

/** Usage: this month's counters of every account the caller may act for (SPEC 8). */
export async function renderUsage(main: HTMLElement): Promise<void> {
  const usage = await api<Usage>('GET', '/api/v1/usage');
  replaceChildren(
    main,
    h('h1', {}, `Usage — ${usage.month}`),
    h(
      'div',
      { class: 'cards' },
      usage.usage.map((u) =>
        h(
          'article',
          { class: 'card', 'data-account': u.account },
          h('h3', {}, u.account),
          h(
            'table',
            { 'aria-label': `Usage of ${u.account}` },
            h(
              'tbody',
              {},
              Object.entries(u.counters).map(([name, value]) =>
                h('tr', {}, h('th', {}, name.replaceAll('_', ' ')), h('td', {}, String(value))),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}
