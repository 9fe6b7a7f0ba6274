import { QueryClient } from '@tanstack/react-query';

/**
 * The console's one cache of API answers. A failure shows at once with its Retry (no silent
 * retries: a 401 must start the login now, and a problem must say why now), and a view reads again
 * when it is shown, when a change invalidates it, or on its own interval; not on window focus,
 * which would multiply requests without the user asking.
 */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: false, refetchOnWindowFocus: false, refetchIntervalInBackground: false },
      mutations: { retry: false },
    },
  });
}
