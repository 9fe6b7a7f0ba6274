import type { Config } from '../config.js';
import {
  type AppManifest,
  appManifest,
  type ManifestOwner,
  manifestFormAction,
} from '../domain/app-manifest.js';
import type { Clock } from '../domain/clock.js';
import { convertManifestCode, ManifestConversionError } from '../github/manifest-conversion.js';
import {
  generateSetupCodeNonce,
  generateSetupSessionValue,
  generateSetupState,
  hashSetupValue,
  isSetupCode,
  looksLikeSetupSessionValue,
  SETUP_SESSION_LIFETIME_MS,
  SETUP_STATE_LIFETIME_MS,
  setupCodeFrom,
} from '../security/setup-secrets.js';
import {
  createSetupSession,
  createSetupState,
  deleteSetupCode,
  hasInstallations,
  isLiveSetupSession,
  readSetupCodeNonce,
  setupCodeNonce,
  useSetupState,
} from '../store/app-setup.js';
import type { Store } from '../store/store.js';
import { type AppCredentials, storeRegisteredApp } from './app-credentials.js';
import type { LiveAppCredentials } from './live-app-credentials.js';

/**
 * Setup mode's use cases: the setup code, the setup session a browser gets for it, and
 * registering the GitHub App from a manifest. The routes (http/routes/setup.ts) only translate
 * what these answer.
 *
 *   setup code ──► openSession ──► setup session (cookie)
 *   startRegistration ──► manifest + form action with a `state` bound to the session
 *   GitHub ──► finishRegistration(code, state) ──► conversion ──► App sealed in the store
 *
 * Every step is refused once an App is configured (environment or store), and only a browser
 * holding a live setup session gets past the first.
 */
export type SetupRefusal =
  | 'app_already_configured'
  | 'invalid_setup_code'
  | 'setup_session_required'
  | 'invalid_setup_state';

export type Refused = { outcome: 'refused'; code: SetupRefusal; detail: string };

/**
 * GitHub did not hand over the App: `rejected` — it refused the code (404: unknown, used or older
 * than an hour; 422), or sent none; `unavailable` — it did not answer, or failed.
 */
export type ConversionFailed = {
  outcome: 'conversion_failed';
  reason: 'rejected' | 'unavailable';
  detail: string;
};

export interface SetupStatus {
  configured: boolean;
  /** Where the App's credentials come from; null in setup mode. */
  source: AppCredentials['source'] | null;
  /** Whether the asking browser holds a live setup session. */
  setupSession: boolean;
  /** The App, for a browser with a setup session once it is configured; else null. */
  app: {
    appId: number;
    slug: string | null;
    name: string | null;
    owner: string | null;
    htmlUrl: string | null;
    installUrl: string | null;
  } | null;
  /** Whether the App is installed on any account (only told to a setup session). */
  installed: boolean;
}

export interface AppSetup {
  /** `<ZEKT_BASE_URL>/setup?code=…`, or null once an App is configured. The same URL every time. */
  setupUrl(): Promise<string | null>;
  openSession(code: string): Promise<{ outcome: 'opened'; sessionValue: string } | Refused>;
  status(sessionValue: string | undefined): Promise<SetupStatus>;
  startRegistration(
    sessionValue: string | undefined,
    input: { owner: ManifestOwner; name: string; public: boolean },
  ): Promise<{ outcome: 'started'; action: string; manifest: AppManifest } | Refused>;
  finishRegistration(
    sessionValue: string | undefined,
    input: { code: string | undefined; state: string | undefined },
  ): Promise<{ outcome: 'registered'; app: AppCredentials } | Refused | ConversionFailed>;
}

export interface AppSetupDeps {
  store: Store;
  clock: Clock;
  config: Pick<Config, 'baseUrl' | 'secret'> & { github: Pick<Config['github'], 'apiUrl' | 'webUrl'> };
  credentials: LiveAppCredentials;
  /** The App's install page, for an App configured in the environment (GitHub's `GET /app` tells). */
  appInstallUrl: () => Promise<string | null>;
}

const ALREADY_CONFIGURED: Refused = {
  outcome: 'refused',
  code: 'app_already_configured',
  detail:
    'a GitHub App is configured already (in the environment or registered through setup); setup is closed',
};
const SESSION_REQUIRED: Refused = {
  outcome: 'refused',
  code: 'setup_session_required',
  detail:
    'this browser has not opened the setup URL with its code, or did so more than 2 hours ago: open the URL `zekt serve` printed (`zekt setup` prints it again)',
};

export function createAppSetup(deps: AppSetupDeps): AppSetup {
  const { store, clock, config } = deps;
  const configured = async () => (await deps.credentials.get({ fresh: true })) !== null;
  const liveSession = async (value: string | undefined) =>
    value !== undefined &&
    looksLikeSetupSessionValue(value) &&
    (await isLiveSetupSession(store.db, hashSetupValue(value), clock.now()));

  return {
    async setupUrl() {
      if (await configured()) return null;
      const nonce = await store.transaction((trx) =>
        setupCodeNonce(trx, generateSetupCodeNonce(), clock.now()),
      );
      return `${config.baseUrl}/setup?code=${setupCodeFrom(config.secret, nonce)}`;
    },

    async openSession(code) {
      if (await configured()) return ALREADY_CONFIGURED;
      const nonce = await readSetupCodeNonce(store.db);
      if (nonce === undefined || !isSetupCode(config.secret, nonce, code)) {
        return {
          outcome: 'refused',
          code: 'invalid_setup_code',
          detail:
            'this is not the setup code: open the URL `zekt serve` printed at start, or run `zekt setup` with the same ZEKT_SECRET and store',
        };
      }
      const sessionValue = generateSetupSessionValue();
      const now = clock.now();
      await store.transaction((trx) =>
        createSetupSession(
          trx,
          { sessionHash: hashSetupValue(sessionValue), expiresAt: now + SETUP_SESSION_LIFETIME_MS },
          now,
        ),
      );
      return { outcome: 'opened', sessionValue };
    },

    async status(sessionValue) {
      const credentials = await deps.credentials.get({ fresh: true });
      const setupSession = await liveSession(sessionValue);
      if (credentials === null || !setupSession) {
        return {
          configured: credentials !== null,
          source: credentials?.source ?? null,
          setupSession,
          app: null,
          installed: false,
        };
      }
      const installUrl =
        credentials.slug === null
          ? await deps.appInstallUrl()
          : `${config.github.webUrl}/apps/${credentials.slug}/installations/new`;
      return {
        configured: true,
        source: credentials.source,
        setupSession,
        app: {
          appId: credentials.appId,
          slug: credentials.slug,
          name: credentials.name,
          owner: credentials.owner,
          htmlUrl: credentials.htmlUrl,
          installUrl,
        },
        installed: await hasInstallations(store.db),
      };
    },

    async startRegistration(sessionValue, input) {
      if (await configured()) return ALREADY_CONFIGURED;
      if (!(await liveSession(sessionValue))) return SESSION_REQUIRED;
      const state = generateSetupState();
      const now = clock.now();
      await store.transaction((trx) =>
        createSetupState(
          trx,
          {
            stateHash: hashSetupValue(state),
            sessionHash: hashSetupValue(sessionValue as string),
            expiresAt: now + SETUP_STATE_LIFETIME_MS,
          },
          now,
        ),
      );
      return {
        outcome: 'started',
        action: manifestFormAction(config.github.webUrl, input.owner, state),
        manifest: appManifest({ baseUrl: config.baseUrl, name: input.name.trim(), public: input.public }),
      };
    },

    async finishRegistration(sessionValue, input) {
      if (await configured()) return ALREADY_CONFIGURED;
      if (!(await liveSession(sessionValue))) return SESSION_REQUIRED;
      // The state is used up before anything else happens, whatever happens next.
      const used =
        input.state !== undefined &&
        (await store.transaction((trx) =>
          useSetupState(
            trx,
            {
              stateHash: hashSetupValue(input.state as string),
              sessionHash: hashSetupValue(sessionValue as string),
            },
            clock.now(),
          ),
        ));
      if (!used) {
        return {
          outcome: 'refused',
          code: 'invalid_setup_state',
          detail:
            'GitHub sent this browser back with a state it was not given, one used already, or one older than an hour: start the registration again on the setup page',
        };
      }
      if (input.code === undefined || input.code === '') {
        return {
          outcome: 'conversion_failed',
          reason: 'rejected',
          detail: 'GitHub sent no code: start the registration again on the setup page',
        };
      }
      let converted: Awaited<ReturnType<typeof convertManifestCode>>;
      try {
        converted = await convertManifestCode({ apiUrl: config.github.apiUrl, code: input.code });
      } catch (error) {
        if (!(error instanceof ManifestConversionError)) throw error;
        const refused = error.status !== undefined && error.status >= 400 && error.status < 500;
        return {
          outcome: 'conversion_failed',
          reason: refused ? 'rejected' : 'unavailable',
          detail: `GitHub answered ${error.status ?? 'nothing'}: ${error.message}`,
        };
      }
      const now = clock.now();
      const stored = await store.transaction(async (trx) => {
        const inserted = await storeRegisteredApp(
          trx,
          config.secret,
          {
            appId: converted.id,
            slug: converted.slug,
            name: converted.name,
            htmlUrl: converted.htmlUrl,
            owner: converted.owner,
            privateKey: converted.pem,
            webhookSecret: converted.webhookSecret,
            clientId: converted.clientId,
            clientSecret: converted.clientSecret,
          },
          now,
        );
        // The printed setup code opens nothing any more.
        if (inserted) await deleteSetupCode(trx);
        return inserted;
      });
      if (!stored) {
        return {
          outcome: 'refused',
          code: 'app_already_configured',
          detail: `another browser registered an App first; delete the App just created, ${converted.htmlUrl}, in its settings on GitHub`,
        };
      }
      deps.credentials.invalidate();
      const app = await deps.credentials.get({ fresh: true });
      if (app === null) throw new Error('the App just stored cannot be read back');
      return { outcome: 'registered', app };
    },
  };
}
