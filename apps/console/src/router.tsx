import { type AnchorHTMLAttributes, type MouseEvent, useSyncExternalStore } from 'react';

/**
 * Paths are real URLs: the server answers each with the console's page, so links can be shared,
 * bookmarked and reloaded. Navigation inside the console changes the URL without a reload.
 */
const listeners = new Set<() => void>();
let navigated = false;

window.addEventListener('popstate', () => {
  navigated = true;
  for (const listener of listeners) listener();
});

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  navigated = true;
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The current path and query; re-renders on navigation. */
export function useLocation(): { path: string; query: URLSearchParams; href: string } {
  const href = useSyncExternalStore(subscribe, () => location.pathname + location.search);
  const url = new URL(href, location.origin);
  return { path: url.pathname, query: url.searchParams, href };
}

/** Whether the page was reached by navigating inside the console (then headings take the focus). */
export function cameByNavigation(): boolean {
  return navigated;
}

/** Sets query parameters (undefined or '' removes one), replacing the history entry. */
export function setQuery(
  changes: Record<string, string | undefined>,
  options: { push?: boolean } = {},
): void {
  const url = new URL(location.href);
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined || value === '') url.searchParams.delete(name);
    else url.searchParams.set(name, value);
  }
  navigate(url.pathname + url.search, { replace: !options.push });
}

export function Link({ to, onClick, ...props }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const follow = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey)
      return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={to} onClick={follow} {...props} />;
}
