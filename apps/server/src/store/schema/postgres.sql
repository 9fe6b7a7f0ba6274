table accounts (
  account_id bigint not null,
  created_at bigint not null,
  installation_id bigint,
  installed_at bigint,
  login text not null,
  suspended_at bigint,
  type text not null,
  uninstalled_at bigint,
  updated_at bigint not null,
  constraint accounts_installation_id_key UNIQUE (installation_id),
  constraint accounts_pkey PRIMARY KEY (account_id)
);
CREATE UNIQUE INDEX accounts_installation_id_key ON public.accounts USING btree (installation_id);
CREATE INDEX accounts_login ON public.accounts USING btree (login);
CREATE UNIQUE INDEX accounts_pkey ON public.accounts USING btree (account_id);

table alerts (
  account_id bigint not null,
  alert_id text not null,
  attempts integer not null,
  created_at bigint not null,
  dedup_key text not null,
  kind text not null,
  last_error text,
  lease_expires_at bigint,
  lease_owner text,
  next_attempt_at bigint,
  payload text not null,
  sent_at bigint,
  status text not null,
  constraint alerts_pkey PRIMARY KEY (alert_id)
);
CREATE INDEX alerts_account ON public.alerts USING btree (account_id, created_at);
CREATE INDEX alerts_dedup ON public.alerts USING btree (dedup_key, created_at);
CREATE INDEX alerts_due ON public.alerts USING btree (status, next_attempt_at);
CREATE UNIQUE INDEX alerts_pkey ON public.alerts USING btree (alert_id);

table api_tokens (
  created_at bigint not null,
  expires_at bigint,
  last_used_at bigint,
  name text not null,
  revoked_at bigint,
  token_hash text not null,
  token_id text not null,
  user_id text not null,
  constraint api_tokens_pkey PRIMARY KEY (token_id),
  constraint api_tokens_token_hash_key UNIQUE (token_hash),
  constraint api_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(user_id)
);
CREATE UNIQUE INDEX api_tokens_pkey ON public.api_tokens USING btree (token_id);
CREATE UNIQUE INDEX api_tokens_token_hash_key ON public.api_tokens USING btree (token_hash);
CREATE INDEX api_tokens_user ON public.api_tokens USING btree (user_id, token_id);

table app_credentials (
  registered_at bigint not null,
  sealed text not null,
  slot text not null,
  constraint app_credentials_pkey PRIMARY KEY (slot),
  constraint app_credentials_slot_check CHECK ((slot = 'github_app'::text))
);
CREATE UNIQUE INDEX app_credentials_pkey ON public.app_credentials USING btree (slot);

table archives (
  archived_at bigint not null,
  event_id text not null,
  expires_at bigint not null,
  has_message boolean not null,
  payload text,
  payload_bytes integer not null,
  summary text not null,
  constraint archives_pkey PRIMARY KEY (event_id)
);
CREATE INDEX archives_expires ON public.archives USING btree (expires_at);
CREATE UNIQUE INDEX archives_pkey ON public.archives USING btree (event_id);

table audit_entries (
  account_id bigint,
  action text not null,
  actor_login text not null,
  actor_token_id text,
  actor_user_id text,
  after text,
  audit_id text not null,
  before text,
  created_at bigint not null,
  target_id text not null,
  target_type text not null,
  constraint audit_entries_pkey PRIMARY KEY (audit_id)
);
CREATE INDEX audit_entries_account ON public.audit_entries USING btree (account_id, audit_id);
CREATE INDEX audit_entries_created ON public.audit_entries USING btree (created_at);
CREATE UNIQUE INDEX audit_entries_pkey ON public.audit_entries USING btree (audit_id);

table connection_health_states (
  health text not null,
  subscription_id text not null,
  updated_at bigint not null,
  constraint connection_health_states_pkey PRIMARY KEY (subscription_id)
);
CREATE UNIQUE INDEX connection_health_states_pkey ON public.connection_health_states USING btree (subscription_id);

table deliveries (
  attempt_count integer not null default 0,
  awaiting_start_since bigint,
  completed_at bigint,
  confirmation_attempts integer not null default 0,
  confirmed_at bigint,
  consumer_account_id bigint not null,
  consumer_conclusion text,
  consumer_repository_id bigint not null,
  consumer_run_html_url text,
  consumer_run_id bigint,
  consumer_run_url text,
  correlation_id text not null,
  delivery_id text not null,
  dispatch_state text not null,
  dispatched_at bigint not null,
  durable boolean not null,
  event_id text not null,
  event_type text not null,
  failure_reason text,
  is_finalized boolean not null default false,
  lease_expires_at bigint,
  lease_owner text,
  next_attempt_at bigint,
  not_started_at bigint,
  payload_by_reference boolean not null default false,
  platform_response text,
  provider_account_id bigint not null,
  provider_repository_id bigint not null,
  replay_of text,
  replayed_by text,
  retry_number integer not null default 0,
  run_attempt integer not null,
  run_follow_at bigint,
  run_follow_reads integer not null default 0,
  run_seen_at bigint,
  schema_version integer,
  service_id text not null,
  slot_reserved boolean not null default false,
  status text not null,
  subscription_id text not null,
  trace_parent text,
  updated_at bigint not null,
  constraint deliveries_pkey PRIMARY KEY (delivery_id)
);
CREATE INDEX deliveries_awaiting_start ON public.deliveries USING btree (awaiting_start_since) WHERE (awaiting_start_since IS NOT NULL);
CREATE INDEX deliveries_consumer_account ON public.deliveries USING btree (consumer_account_id, delivery_id);
CREATE INDEX deliveries_consumer_failure ON public.deliveries USING btree (subscription_id, dispatched_at) WHERE (consumer_conclusion = 'failure'::text);
CREATE INDEX deliveries_consumer_run ON public.deliveries USING btree (consumer_repository_id, consumer_run_id) WHERE (consumer_run_id IS NOT NULL);
CREATE INDEX deliveries_correlation ON public.deliveries USING btree (correlation_id, consumer_repository_id);
CREATE INDEX deliveries_due ON public.deliveries USING btree (dispatch_state, next_attempt_at);
CREATE INDEX deliveries_event ON public.deliveries USING btree (event_id);
CREATE INDEX deliveries_not_started ON public.deliveries USING btree (subscription_id, dispatched_at) WHERE (not_started_at IS NOT NULL);
CREATE UNIQUE INDEX deliveries_pkey ON public.deliveries USING btree (delivery_id);
CREATE INDEX deliveries_provider_account ON public.deliveries USING btree (provider_account_id, delivery_id);
CREATE INDEX deliveries_run_follow ON public.deliveries USING btree (run_follow_at) WHERE (run_follow_at IS NOT NULL);
CREATE INDEX deliveries_subscription_dispatched ON public.deliveries USING btree (subscription_id, dispatched_at);

table delivery_attempts (
  attempt_id text not null,
  delivery_id text not null,
  duration_ms integer not null,
  error_category text,
  error_message text,
  number integer not null,
  outcome text not null,
  response_headers text,
  started_at bigint not null,
  status_code integer,
  subscription_id text not null,
  constraint delivery_attempts_number UNIQUE (delivery_id, number),
  constraint delivery_attempts_pkey PRIMARY KEY (attempt_id)
);
CREATE UNIQUE INDEX delivery_attempts_number ON public.delivery_attempts USING btree (delivery_id, number);
CREATE UNIQUE INDEX delivery_attempts_pkey ON public.delivery_attempts USING btree (attempt_id);
CREATE INDEX delivery_attempts_subscription ON public.delivery_attempts USING btree (subscription_id, outcome, started_at);

table events (
  account_id bigint not null,
  conclusion text,
  deliveries_created integer not null default 0,
  event_id text not null,
  message_id text,
  received_at bigint not null,
  repository_id bigint not null,
  route_after bigint not null,
  route_status text not null,
  routed_at bigint,
  run_attempt integer not null,
  run_id bigint not null,
  summary text not null,
  trace_parent text,
  workflow_name text not null,
  workflow_path text not null,
  constraint events_pkey PRIMARY KEY (event_id),
  constraint events_run_key UNIQUE (repository_id, run_id, run_attempt)
);
CREATE INDEX events_pending ON public.events USING btree (route_status, route_after);
CREATE UNIQUE INDEX events_pkey ON public.events USING btree (event_id);
CREATE UNIQUE INDEX events_run_key ON public.events USING btree (repository_id, run_id, run_attempt);

table leases (
  expires_at bigint not null,
  name text not null,
  owner text not null,
  constraint leases_pkey PRIMARY KEY (name)
);
CREATE UNIQUE INDEX leases_pkey ON public.leases USING btree (name);

table memberships (
  account_id bigint not null,
  created_at bigint not null,
  source text not null,
  user_id text not null,
  constraint memberships_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(account_id),
  constraint memberships_pk PRIMARY KEY (user_id, account_id),
  constraint memberships_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(user_id)
);
CREATE UNIQUE INDEX memberships_pk ON public.memberships USING btree (user_id, account_id);

table messages (
  account_id bigint not null,
  event_type text not null,
  message_id text not null,
  payload text not null,
  payload_bytes integer not null,
  received_at bigint not null,
  repository_id bigint not null,
  run_attempt integer not null,
  run_id bigint not null,
  schema_versions text,
  sender text not null,
  status text not null,
  updated_at bigint not null,
  workflow_path text,
  constraint messages_pkey PRIMARY KEY (message_id),
  constraint messages_run_key UNIQUE (repository_id, run_id, run_attempt)
);
CREATE UNIQUE INDEX messages_pkey ON public.messages USING btree (message_id);
CREATE UNIQUE INDEX messages_run_key ON public.messages USING btree (repository_id, run_id, run_attempt);
CREATE INDEX messages_status_received ON public.messages USING btree (status, received_at);

table pacing_slots (
  account_id bigint not null,
  next_slot_at bigint not null,
  constraint pacing_slots_pkey PRIMARY KEY (account_id)
);
CREATE UNIQUE INDEX pacing_slots_pkey ON public.pacing_slots USING btree (account_id);

table rate_limit_counters (
  bucket text not null,
  count bigint not null,
  window_start bigint not null,
  constraint rate_limit_counters_pk PRIMARY KEY (bucket, window_start)
);
CREATE UNIQUE INDEX rate_limit_counters_pk ON public.rate_limit_counters USING btree (bucket, window_start);
CREATE INDEX rate_limit_counters_window ON public.rate_limit_counters USING btree (window_start);

table recoveries (
  created_at bigint not null,
  finished_at bigint,
  idempotency_key text,
  lease_expires_at bigint,
  lease_owner text,
  position text,
  recovery_id text not null,
  replayed integer not null default 0,
  requested_by text not null,
  since_at bigint not null,
  skipped integer not null default 0,
  states text not null,
  status text not null,
  subscription_id text not null,
  total integer not null,
  turn_at bigint,
  until_at bigint not null,
  updated_at bigint not null,
  constraint recoveries_pkey PRIMARY KEY (recovery_id)
);
CREATE UNIQUE INDEX recoveries_idempotency ON public.recoveries USING btree (requested_by, subscription_id, idempotency_key);
CREATE UNIQUE INDEX recoveries_pkey ON public.recoveries USING btree (recovery_id);
CREATE UNIQUE INDEX recoveries_running ON public.recoveries USING btree (subscription_id) WHERE (status = 'running'::text);
CREATE INDEX recoveries_status ON public.recoveries USING btree (status);
CREATE INDEX recoveries_subscription ON public.recoveries USING btree (subscription_id);

table recovery_items (
  created_at bigint not null,
  delivery_id text not null,
  outcome text not null,
  recovery_id text not null,
  replay_id text,
  constraint recovery_items_pk PRIMARY KEY (recovery_id, delivery_id)
);
CREATE UNIQUE INDEX recovery_items_pk ON public.recovery_items USING btree (recovery_id, delivery_id);

table redelivery_requests (
  action text,
  delivery_guid text not null,
  event text not null,
  github_delivery_id bigint not null,
  hook text not null,
  recovered_at bigint,
  requested_at bigint not null,
  constraint redelivery_requests_pkey PRIMARY KEY (delivery_guid)
);
CREATE UNIQUE INDEX redelivery_requests_pkey ON public.redelivery_requests USING btree (delivery_guid);
CREATE INDEX redelivery_requests_requested ON public.redelivery_requests USING btree (requested_at);

table replay_requests (
  created_at bigint not null,
  delivery_id text not null,
  idempotency_key text not null,
  replay_id text not null,
  requested_by text not null,
  constraint replay_requests_pk PRIMARY KEY (requested_by, delivery_id, idempotency_key)
);
CREATE INDEX replay_requests_created ON public.replay_requests USING btree (created_at);
CREATE UNIQUE INDEX replay_requests_pk ON public.replay_requests USING btree (requested_by, delivery_id, idempotency_key);

table repositories (
  account_id bigint not null,
  completion_enabled boolean not null default false,
  created_at bigint not null,
  full_name text not null,
  name text not null,
  private boolean not null default false,
  provider_enabled boolean not null default false,
  removed_at bigint,
  repository_id bigint not null,
  updated_at bigint not null,
  constraint repositories_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(account_id),
  constraint repositories_pkey PRIMARY KEY (repository_id)
);
CREATE INDEX repositories_account ON public.repositories USING btree (account_id);
CREATE INDEX repositories_full_name ON public.repositories USING btree (full_name);
CREATE UNIQUE INDEX repositories_pkey ON public.repositories USING btree (repository_id);

table repository_hooks (
  created_at bigint not null,
  hook_id bigint,
  repository_id bigint not null,
  role text not null,
  secret_encrypted text not null,
  updated_at bigint not null,
  url text not null,
  constraint repository_hooks_hook_id_key UNIQUE (hook_id),
  constraint repository_hooks_pk PRIMARY KEY (repository_id, role),
  constraint repository_hooks_repository_id_fkey FOREIGN KEY (repository_id) REFERENCES repositories(repository_id)
);
CREATE UNIQUE INDEX repository_hooks_hook_id_key ON public.repository_hooks USING btree (hook_id);
CREATE UNIQUE INDEX repository_hooks_pk ON public.repository_hooks USING btree (repository_id, role);

table schema_violations (
  account_id bigint not null,
  created_at bigint not null,
  enforcement text not null,
  error_count integer not null,
  errors text not null,
  kind text not null,
  outcome text not null,
  repository_id bigint not null,
  run_attempt integer not null,
  run_id bigint not null,
  schema_version integer not null,
  service_id text not null,
  violation_id text not null,
  constraint schema_violations_pkey PRIMARY KEY (violation_id)
);
CREATE INDEX schema_violations_account ON public.schema_violations USING btree (account_id, created_at);
CREATE UNIQUE INDEX schema_violations_pkey ON public.schema_violations USING btree (violation_id);
CREATE INDEX schema_violations_run ON public.schema_violations USING btree (repository_id, run_id, run_attempt);

table service_schemas (
  account_id bigint not null,
  compatibility text not null,
  created_at bigint not null,
  created_by text not null,
  example text,
  requires_message boolean not null,
  schema text not null,
  schema_bytes integer not null,
  service_id text not null,
  version integer not null,
  constraint service_schemas_pk PRIMARY KEY (service_id, version),
  constraint service_schemas_service_id_fkey FOREIGN KEY (service_id) REFERENCES services(service_id)
);
CREATE UNIQUE INDEX service_schemas_pk ON public.service_schemas USING btree (service_id, version);

table services (
  account_id bigint not null,
  created_at bigint not null,
  description text not null,
  event_type text not null,
  published boolean not null default false,
  repository_id bigint not null,
  schema_enforcement text not null default 'off'::text,
  schema_requires_message boolean not null default false,
  schema_version integer,
  service_id text not null,
  slug text not null,
  tags text not null,
  updated_at bigint not null,
  visibility text not null,
  workflow_path text not null,
  constraint services_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(account_id),
  constraint services_account_slug UNIQUE (account_id, slug),
  constraint services_pkey PRIMARY KEY (service_id),
  constraint services_repository_id_fkey FOREIGN KEY (repository_id) REFERENCES repositories(repository_id)
);
CREATE UNIQUE INDEX services_account_slug ON public.services USING btree (account_id, slug);
CREATE UNIQUE INDEX services_pkey ON public.services USING btree (service_id);
CREATE INDEX services_workflow ON public.services USING btree (repository_id, workflow_path);

table sessions (
  created_at bigint not null,
  expires_at bigint not null,
  session_hash text not null,
  user_id text not null,
  constraint sessions_pkey PRIMARY KEY (session_hash),
  constraint sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(user_id)
);
CREATE INDEX sessions_expires ON public.sessions USING btree (expires_at);
CREATE UNIQUE INDEX sessions_pkey ON public.sessions USING btree (session_hash);
CREATE INDEX sessions_user ON public.sessions USING btree (user_id);

table setup_codes (
  created_at bigint not null,
  nonce text not null,
  slot text not null,
  constraint setup_codes_pkey PRIMARY KEY (slot)
);
CREATE UNIQUE INDEX setup_codes_pkey ON public.setup_codes USING btree (slot);

table setup_sessions (
  created_at bigint not null,
  expires_at bigint not null,
  session_hash text not null,
  constraint setup_sessions_pkey PRIMARY KEY (session_hash)
);
CREATE UNIQUE INDEX setup_sessions_pkey ON public.setup_sessions USING btree (session_hash);

table setup_states (
  created_at bigint not null,
  expires_at bigint not null,
  session_hash text not null,
  state_hash text not null,
  used_at bigint,
  constraint setup_states_pkey PRIMARY KEY (state_hash)
);
CREATE UNIQUE INDEX setup_states_pkey ON public.setup_states USING btree (state_hash);

table subscriptions (
  consumer_account_id bigint not null,
  consumer_repository_id bigint not null,
  created_at bigint not null,
  decided_at bigint,
  decided_by text,
  delivery_mode text not null default 'repository_dispatch'::text,
  dispatch_ref text,
  dispatch_workflow text,
  durable boolean not null default false,
  requested_at bigint not null,
  requested_by text not null,
  service_id text not null,
  status text not null,
  subscription_id text not null,
  updated_at bigint not null,
  constraint subscriptions_consumer_account_id_fkey FOREIGN KEY (consumer_account_id) REFERENCES accounts(account_id),
  constraint subscriptions_consumer_repository_id_fkey FOREIGN KEY (consumer_repository_id) REFERENCES repositories(repository_id),
  constraint subscriptions_pkey PRIMARY KEY (subscription_id),
  constraint subscriptions_service_id_fkey FOREIGN KEY (service_id) REFERENCES services(service_id)
);
CREATE INDEX subscriptions_consumer ON public.subscriptions USING btree (consumer_account_id, status);
CREATE UNIQUE INDEX subscriptions_live ON public.subscriptions USING btree (service_id, consumer_repository_id) WHERE (status = ANY (ARRAY['requested'::text, 'approved'::text]));
CREATE UNIQUE INDEX subscriptions_pkey ON public.subscriptions USING btree (subscription_id);
CREATE INDEX subscriptions_service ON public.subscriptions USING btree (service_id, status);

table usage_daily (
  account_id bigint not null,
  counter text not null,
  day text not null,
  value bigint not null default 0,
  constraint usage_daily_pk PRIMARY KEY (account_id, day, counter)
);
CREATE UNIQUE INDEX usage_daily_pk ON public.usage_daily USING btree (account_id, day, counter);

table usage_daily_shards (
  account_id bigint not null,
  counter text not null,
  day text not null,
  shard integer not null,
  value bigint not null default 0,
  constraint usage_daily_shards_pk PRIMARY KEY (account_id, day, counter, shard)
);
CREATE UNIQUE INDEX usage_daily_shards_pk ON public.usage_daily_shards USING btree (account_id, day, counter, shard);

table users (
  created_at bigint not null,
  github_id bigint,
  login text not null,
  updated_at bigint not null,
  user_id text not null,
  constraint users_github_id_key UNIQUE (github_id),
  constraint users_login_key UNIQUE (login),
  constraint users_pkey PRIMARY KEY (user_id)
);
CREATE UNIQUE INDEX users_github_id_key ON public.users USING btree (github_id);
CREATE UNIQUE INDEX users_login_key ON public.users USING btree (login);
CREATE UNIQUE INDEX users_pkey ON public.users USING btree (user_id);

table webhook_deliveries (
  delivery_guid text not null,
  event text not null,
  hook_id bigint,
  received_at bigint not null,
  constraint webhook_deliveries_pkey PRIMARY KEY (delivery_guid)
);
CREATE UNIQUE INDEX webhook_deliveries_pkey ON public.webhook_deliveries USING btree (delivery_guid);
CREATE INDEX webhook_deliveries_received ON public.webhook_deliveries USING btree (received_at);

table webhook_receipts (
  delivery_guid text not null,
  event text not null,
  hook_id bigint not null,
  received_at bigint not null,
  constraint webhook_receipts_pk PRIMARY KEY (delivery_guid, hook_id)
);
CREATE UNIQUE INDEX webhook_receipts_pk ON public.webhook_receipts USING btree (delivery_guid, hook_id);
CREATE INDEX webhook_receipts_received ON public.webhook_receipts USING btree (received_at);

table webhook_redeliveries (
  action text,
  asked_at bigint not null,
  asks integer not null,
  delivery_guid text not null,
  event text not null,
  gave_up_at bigint,
  github_delivery_id bigint not null,
  hook text not null,
  recovered_at bigint,
  requested_at bigint not null,
  constraint webhook_redeliveries_pk PRIMARY KEY (delivery_guid, hook)
);
CREATE UNIQUE INDEX webhook_redeliveries_pk ON public.webhook_redeliveries USING btree (delivery_guid, hook);
CREATE INDEX webhook_redeliveries_requested ON public.webhook_redeliveries USING btree (requested_at);

table workflows (
  blocked_count bigint not null default 0,
  created_at bigint not null,
  first_seen_at bigint,
  last_seen_at bigint,
  name text,
  path text not null,
  repository_id bigint not null,
  updated_at bigint not null,
  whitelisted boolean not null default false,
  constraint workflows_pk PRIMARY KEY (repository_id, path),
  constraint workflows_repository_id_fkey FOREIGN KEY (repository_id) REFERENCES repositories(repository_id)
);
CREATE UNIQUE INDEX workflows_pk ON public.workflows USING btree (repository_id, path);

CREATE OR REPLACE FUNCTION public.zekt_rows(jsonb)
RETURNS SETOF jsonb
LANGUAGE sql
ROWS 1
AS $function$select jsonb_array_elements($1)$function$;

CREATE OR REPLACE FUNCTION public.zekt_run_message(bigint, bigint, integer)
RETURNS json
LANGUAGE sql
AS $function$select to_json(m) from messages m
where m.repository_id = $1 and m.run_id = $2 and m.run_attempt = $3$function$;
