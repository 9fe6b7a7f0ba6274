import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiProblem } from '../api/client';

export interface Query<T> {
  data: T | undefined;
  error: ApiProblem | undefined;
  loading: boolean;
  /** When the data shown was loaded. */
  updatedAt: Date | undefined;
  reload(): void;
}

/**
 * Loads data for a view and keeps it fresh. `key` names what is loaded: when it changes the view
 * loads again (an answer for an older key is dropped). With `pollMs` the data is read again on that
 * interval while the tab is visible: the console's live updates (Delivery Status, My Connections).
 */
export function useQuery<T>(
  key: string,
  load: () => Promise<T>,
  options: { pollMs?: number } = {},
): Query<T> {
  const [state, setState] = useState<{ key: string; data?: T; error?: ApiProblem; updatedAt?: Date }>({
    key,
  });
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const loader = useRef(load);
  loader.current = load;

  const run = useCallback(
    (quiet: boolean) => {
      const mine = ++generation.current;
      if (!quiet) setLoading(true);
      loader
        .current()
        .then((data) => {
          if (mine === generation.current) setState({ key, data, updatedAt: new Date() });
        })
        .catch((error: unknown) => {
          if (mine !== generation.current) return;
          const problem =
            error instanceof ApiProblem
              ? error
              : new ApiProblem(0, 'error', 'Something went wrong', String(error));
          // A failed refresh keeps what was shown and says why.
          setState((previous) => ({ ...(previous.key === key ? previous : { key }), error: problem }));
        })
        .finally(() => {
          if (mine === generation.current) setLoading(false);
        });
    },
    [key],
  );

  useEffect(() => {
    run(false);
    if (!options.pollMs) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') run(true);
    }, options.pollMs);
    return () => clearInterval(timer);
  }, [run, options.pollMs]);

  const current = state.key === key;
  return {
    data: current ? state.data : undefined,
    error: current ? state.error : undefined,
    loading: loading || !current,
    updatedAt: current ? state.updatedAt : undefined,
    reload: () => run(false),
  };
}
