import { ApiError, api, type Me } from './api.js';
import { h, replaceChildren } from './dom.js';
import { renderConnections } from './views/connections.js';
import { navigate, renderDeliveries } from './views/deliveries.js';
import { renderUsage } from './views/usage.js';

/**
 * The console shell: who is logged in, the navigation, and a view per path. Paths are real URLs
 * (the server answers each with this page), so links can be shared and reloaded.
 */
const VIEWS: Array<{
  path: string;
  title: string;
  render: (main: HTMLElement, params: URLSearchParams) => Promise<void>;
}> = [
  { path: '/deliveries', title: 'Delivery Status', render: renderDeliveries },
  { path: '/connections', title: 'My Connections', render: (main) => renderConnections(main) },
  { path: '/usage', title: 'Usage', render: (main) => renderUsage(main) },
];

const main = document.getElementById('main')!;
const nav = document.getElementById('nav')!;
const who = document.getElementById('who')!;

async function route(): Promise<void> {
  const path = location.pathname === '/' ? '/deliveries' : location.pathname;
  const view = VIEWS.find((v) => v.path === path);
  replaceChildren(
    nav,
    VIEWS.map((v) =>
      h('a', { href: v.path, 'data-link': true, 'aria-current': v === view ? 'page' : undefined }, v.title),
    ),
  );
  if (!view) {
    replaceChildren(main, h('h1', {}, 'Not found'), h('p', {}, 'There is no such page in the console.'));
    return;
  }
  document.title = `${view.title} · Zekt`;
  try {
    await view.render(main, new URLSearchParams(location.search));
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.code === 'session_expired')) {
      showLogin();
      return;
    }
    replaceChildren(main, h('div', { class: 'error', role: 'alert' }, (error as Error).message));
  }
}

function showLogin(): void {
  replaceChildren(nav);
  replaceChildren(who);
  const returnTo = location.pathname + location.search;
  replaceChildren(
    main,
    h(
      'div',
      { class: 'login' },
      h('h1', {}, 'Zekt'),
      h('p', {}, 'Event routing for GitHub Actions: see what was delivered, started and finished.'),
      h(
        'a',
        { class: 'button primary', href: `/auth/login?returnTo=${encodeURIComponent(returnTo)}` },
        'Log in with GitHub',
      ),
    ),
  );
}

async function start(): Promise<void> {
  let me: Me;
  try {
    me = await api<Me>('GET', '/api/v1/me');
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return showLogin();
    replaceChildren(main, h('div', { class: 'error', role: 'alert' }, (error as Error).message));
    return;
  }
  replaceChildren(
    who,
    h('span', { id: 'user' }, me.user.login),
    h('span', { class: 'muted' }, me.accounts.map((a) => a.login).join(', ') || 'no accounts'),
    h(
      'button',
      {
        type: 'button',
        onclick: async () => {
          await fetch('/auth/logout', { method: 'POST', credentials: 'same-origin' });
          showLogin();
        },
      },
      'Log out',
    ),
  );
  // Links inside the console change the view without reloading the page.
  document.addEventListener('click', (event) => {
    const link = (event.target as Element).closest('a[data-link]');
    if (!link || event.defaultPrevented || (event as MouseEvent).button !== 0) return;
    event.preventDefault();
    navigate(link.getAttribute('href')!);
  });
  window.addEventListener('popstate', () => void route());
  await route();
}

void start();
