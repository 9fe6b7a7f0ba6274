CREATE TABLE "accounts" ("account_id" integer primary key, "login" text not null, "type" text not null, "installation_id" integer unique, "installed_at" integer, "suspended_at" integer, "uninstalled_at" integer, "created_at" integer not null, "updated_at" integer not null);

CREATE TABLE "alerts" ("alert_id" text primary key, "account_id" integer not null, "kind" text not null, "dedup_key" text not null, "payload" text not null, "status" text not null, "attempts" integer not null, "next_attempt_at" integer, "lease_owner" text, "lease_expires_at" integer, "last_error" text, "sent_at" integer, "created_at" integer not null);

CREATE TABLE "api_tokens" ("token_id" text primary key, "user_id" text not null references "users" ("user_id"), "token_hash" text not null unique, "name" text not null, "created_at" integer not null, "last_used_at" integer, "revoked_at" integer, "expires_at" integer);

CREATE TABLE "app_credentials" ("slot" text primary key check (slot = 'github_app'), "sealed" text not null, "registered_at" integer not null);

CREATE TABLE "archives" ("event_id" text primary key, "summary" text not null, "has_message" integer not null, "payload" text, "payload_bytes" integer not null, "archived_at" integer not null, "expires_at" integer not null);

CREATE TABLE "audit_entries" ("audit_id" text primary key, "account_id" integer, "actor_user_id" text, "actor_login" text not null, "actor_token_id" text, "action" text not null, "target_type" text not null, "target_id" text not null, "before" text, "after" text, "created_at" integer not null);

CREATE TABLE "connection_health_states" ("subscription_id" text primary key, "health" text not null, "updated_at" integer not null);

CREATE TABLE "deliveries" ("delivery_id" text primary key, "event_id" text not null, "subscription_id" text not null, "service_id" text not null, "provider_account_id" integer not null, "provider_repository_id" integer not null, "consumer_account_id" integer not null, "consumer_repository_id" integer not null, "correlation_id" text not null, "run_attempt" integer not null, "event_type" text not null, "durable" integer not null, "status" text not null, "dispatch_state" text not null, "attempt_count" integer default 0 not null, "next_attempt_at" integer, "lease_owner" text, "lease_expires_at" integer, "dispatched_at" integer not null, "confirmed_at" integer, "completed_at" integer, "consumer_conclusion" text, "is_finalized" integer default 0 not null, "confirmation_attempts" integer default 0 not null, "retry_number" integer default 0 not null, "platform_response" text, "failure_reason" text, "replay_of" text, "replayed_by" text, "payload_by_reference" integer default 0 not null, "slot_reserved" integer default 0 not null, "updated_at" integer not null, "awaiting_start_since" integer, "not_started_at" integer, "run_seen_at" integer, "consumer_run_id" integer, "consumer_run_url" text, "consumer_run_html_url" text, "run_follow_at" integer, "run_follow_reads" integer default 0 not null, "schema_version" integer, "trace_parent" text);

CREATE TABLE "delivery_attempts" ("attempt_id" text primary key, "delivery_id" text not null, "number" integer not null, "started_at" integer not null, "duration_ms" integer not null, "outcome" text not null, "status_code" integer, "error_category" text, "error_message" text, "response_headers" text, "subscription_id" text, constraint "delivery_attempts_number" unique ("delivery_id", "number"));

CREATE TABLE "events" ("event_id" text primary key, "repository_id" integer not null, "run_id" integer not null, "run_attempt" integer not null, "account_id" integer not null, "workflow_path" text not null, "workflow_name" text not null, "conclusion" text, "summary" text not null, "received_at" integer not null, "route_after" integer not null, "route_status" text not null, "routed_at" integer, "message_id" text, "deliveries_created" integer default 0 not null, "trace_parent" text, constraint "events_run_key" unique ("repository_id", "run_id", "run_attempt"));

CREATE TABLE "leases" ("name" text primary key, "owner" text not null, "expires_at" integer not null);

CREATE TABLE "memberships" ("user_id" text not null references "users" ("user_id"), "account_id" integer not null references "accounts" ("account_id"), "source" text not null, "created_at" integer not null, constraint "memberships_pk" primary key ("user_id", "account_id"));

CREATE TABLE "messages" ("message_id" text primary key, "repository_id" integer not null, "run_id" integer not null, "run_attempt" integer not null, "account_id" integer not null, "workflow_path" text, "event_type" text not null, "payload" text not null, "payload_bytes" integer not null, "sender" text not null, "status" text not null, "received_at" integer not null, "updated_at" integer not null, "schema_versions" text, constraint "messages_run_key" unique ("repository_id", "run_id", "run_attempt"));

CREATE TABLE "pacing_slots" ("account_id" integer primary key, "next_slot_at" integer not null);

CREATE TABLE "rate_limit_counters" ("bucket" text not null, "window_start" integer not null, "count" integer not null, constraint "rate_limit_counters_pk" primary key ("bucket", "window_start"));

CREATE TABLE "recoveries" ("recovery_id" text primary key, "subscription_id" text not null, "requested_by" text not null, "idempotency_key" text, "states" text not null, "since_at" integer not null, "until_at" integer not null, "status" text not null, "total" integer not null, "replayed" integer default 0 not null, "skipped" integer default 0 not null, "position" text, "lease_owner" text, "lease_expires_at" integer, "created_at" integer not null, "updated_at" integer not null, "finished_at" integer, "turn_at" integer);

CREATE TABLE "recovery_items" ("recovery_id" text not null, "delivery_id" text not null, "outcome" text not null, "replay_id" text, "created_at" integer not null, constraint "recovery_items_pk" primary key ("recovery_id", "delivery_id"));

CREATE TABLE "redelivery_requests" ("delivery_guid" text primary key, "hook" text not null, "github_delivery_id" integer not null, "event" text not null, "action" text, "requested_at" integer not null, "recovered_at" integer);

CREATE TABLE "replay_requests" ("requested_by" text not null, "delivery_id" text not null, "idempotency_key" text not null, "replay_id" text not null, "created_at" integer not null, constraint "replay_requests_pk" primary key ("requested_by", "delivery_id", "idempotency_key"));

CREATE TABLE "repositories" ("repository_id" integer primary key, "account_id" integer not null references "accounts" ("account_id"), "full_name" text not null, "name" text not null, "private" integer default 0 not null, "provider_enabled" integer default 0 not null, "completion_enabled" integer default 0 not null, "removed_at" integer, "created_at" integer not null, "updated_at" integer not null);

CREATE TABLE "repository_hooks" ("repository_id" integer not null references "repositories" ("repository_id"), "role" text not null, "hook_id" integer unique, "secret_encrypted" text not null, "url" text not null, "created_at" integer not null, "updated_at" integer not null, constraint "repository_hooks_pk" primary key ("repository_id", "role"));

CREATE TABLE "schema_violations" ("violation_id" text primary key, "account_id" integer not null, "service_id" text not null, "schema_version" integer not null, "enforcement" text not null, "kind" text not null, "outcome" text not null, "repository_id" integer not null, "run_id" integer not null, "run_attempt" integer not null, "errors" text not null, "error_count" integer not null, "created_at" integer not null);

CREATE TABLE "service_schemas" ("service_id" text not null references "services" ("service_id"), "version" integer not null, "account_id" integer not null, "schema" text not null, "schema_bytes" integer not null, "example" text, "requires_message" integer not null, "compatibility" text not null, "created_by" text not null, "created_at" integer not null, constraint "service_schemas_pk" primary key ("service_id", "version"));

CREATE TABLE "services" ("service_id" text primary key, "account_id" integer not null references "accounts" ("account_id"), "repository_id" integer not null references "repositories" ("repository_id"), "workflow_path" text not null, "slug" text not null, "event_type" text not null, "description" text not null, "tags" text not null, "visibility" text not null, "published" integer default 0 not null, "created_at" integer not null, "updated_at" integer not null, "schema_version" integer, "schema_enforcement" text default 'off' not null, "schema_requires_message" integer default 0 not null, constraint "services_account_slug" unique ("account_id", "slug"));

CREATE TABLE "sessions" ("session_hash" text primary key, "user_id" text not null references "users" ("user_id"), "created_at" integer not null, "expires_at" integer not null);

CREATE TABLE "setup_codes" ("slot" text primary key, "nonce" text not null, "created_at" integer not null);

CREATE TABLE "setup_sessions" ("session_hash" text primary key, "created_at" integer not null, "expires_at" integer not null);

CREATE TABLE "setup_states" ("state_hash" text primary key, "session_hash" text not null, "created_at" integer not null, "expires_at" integer not null, "used_at" integer);

CREATE TABLE "subscriptions" ("subscription_id" text primary key, "service_id" text not null references "services" ("service_id"), "consumer_account_id" integer not null references "accounts" ("account_id"), "consumer_repository_id" integer not null references "repositories" ("repository_id"), "status" text not null, "durable" integer default 0 not null, "requested_by" text not null, "requested_at" integer not null, "decided_by" text, "decided_at" integer, "created_at" integer not null, "updated_at" integer not null, "delivery_mode" text default 'repository_dispatch' not null, "dispatch_workflow" text, "dispatch_ref" text);

CREATE TABLE "usage_daily" ("account_id" integer not null, "day" text not null, "counter" text not null, "value" integer default 0 not null, constraint "usage_daily_pk" primary key ("account_id", "day", "counter"));

CREATE TABLE "usage_daily_shards" ("account_id" integer not null, "day" text not null, "counter" text not null, "shard" integer not null, "value" integer default 0 not null, constraint "usage_daily_shards_pk" primary key ("account_id", "day", "counter", "shard"));

CREATE TABLE "users" ("user_id" text primary key, "github_id" integer unique, "login" text not null unique, "created_at" integer not null, "updated_at" integer not null);

CREATE TABLE "webhook_deliveries" ("delivery_guid" text primary key, "event" text not null, "hook_id" integer, "received_at" integer not null);

CREATE TABLE "webhook_receipts" ("delivery_guid" text not null, "hook_id" integer not null, "event" text not null, "received_at" integer not null, constraint "webhook_receipts_pk" primary key ("delivery_guid", "hook_id"));

CREATE TABLE "webhook_redeliveries" ("delivery_guid" text not null, "hook" text not null, "github_delivery_id" integer not null, "event" text not null, "action" text, "asks" integer not null, "requested_at" integer not null, "asked_at" integer not null, "recovered_at" integer, "gave_up_at" integer, constraint "webhook_redeliveries_pk" primary key ("delivery_guid", "hook"));

CREATE TABLE "workflows" ("repository_id" integer not null references "repositories" ("repository_id"), "path" text not null, "name" text, "whitelisted" integer default 0 not null, "blocked_count" integer default 0 not null, "first_seen_at" integer, "last_seen_at" integer, "created_at" integer not null, "updated_at" integer not null, constraint "workflows_pk" primary key ("repository_id", "path"));

CREATE INDEX "accounts_login" on "accounts" ("login");

CREATE INDEX "alerts_account" on "alerts" ("account_id", "created_at");

CREATE INDEX "alerts_dedup" on "alerts" ("dedup_key", "created_at");

CREATE INDEX "alerts_due" on "alerts" ("status", "next_attempt_at");

CREATE INDEX "api_tokens_user" on "api_tokens" ("user_id", "token_id");

CREATE INDEX "archives_expires" on "archives" ("expires_at");

CREATE INDEX "audit_entries_account" on "audit_entries" ("account_id", "audit_id");

CREATE INDEX "audit_entries_created" on "audit_entries" ("created_at");

CREATE INDEX "deliveries_awaiting_start" on "deliveries" ("awaiting_start_since") where "awaiting_start_since" is not null;

CREATE INDEX "deliveries_consumer_account" on "deliveries" ("consumer_account_id", "delivery_id");

CREATE INDEX "deliveries_consumer_failure" on "deliveries" ("subscription_id", "dispatched_at") where "consumer_conclusion" = 'failure';

CREATE INDEX "deliveries_consumer_run" on "deliveries" ("consumer_repository_id", "consumer_run_id") where "consumer_run_id" is not null;

CREATE INDEX "deliveries_correlation" on "deliveries" ("correlation_id", "consumer_repository_id");

CREATE INDEX "deliveries_due" on "deliveries" ("dispatch_state", "next_attempt_at");

CREATE INDEX "deliveries_event" on "deliveries" ("event_id");

CREATE INDEX "deliveries_not_started" on "deliveries" ("subscription_id", "dispatched_at") where "not_started_at" is not null;

CREATE INDEX "deliveries_provider_account" on "deliveries" ("provider_account_id", "delivery_id");

CREATE INDEX "deliveries_run_follow" on "deliveries" ("run_follow_at") where "run_follow_at" is not null;

CREATE INDEX "deliveries_subscription_dispatched" on "deliveries" ("subscription_id", "dispatched_at");

CREATE INDEX "delivery_attempts_subscription" on "delivery_attempts" ("subscription_id", "outcome", "started_at");

CREATE INDEX "events_pending" on "events" ("route_status", "route_after");

CREATE INDEX "messages_status_received" on "messages" ("status", "received_at");

CREATE INDEX "rate_limit_counters_window" on "rate_limit_counters" ("window_start");

CREATE UNIQUE INDEX "recoveries_idempotency" on "recoveries" ("requested_by", "subscription_id", "idempotency_key");

CREATE UNIQUE INDEX "recoveries_running" on "recoveries" ("subscription_id") where "status" = 'running';

CREATE INDEX "recoveries_status" on "recoveries" ("status");

CREATE INDEX "recoveries_subscription" on "recoveries" ("subscription_id");

CREATE INDEX "redelivery_requests_requested" on "redelivery_requests" ("requested_at");

CREATE INDEX "replay_requests_created" on "replay_requests" ("created_at");

CREATE INDEX "repositories_account" on "repositories" ("account_id");

CREATE INDEX "repositories_full_name" on "repositories" ("full_name");

CREATE INDEX "schema_violations_account" on "schema_violations" ("account_id", "created_at");

CREATE INDEX "schema_violations_run" on "schema_violations" ("repository_id", "run_id", "run_attempt");

CREATE INDEX "services_workflow" on "services" ("repository_id", "workflow_path");

CREATE INDEX "sessions_expires" on "sessions" ("expires_at");

CREATE INDEX "sessions_user" on "sessions" ("user_id");

CREATE INDEX "subscriptions_consumer" on "subscriptions" ("consumer_account_id", "status");

CREATE UNIQUE INDEX "subscriptions_live" on "subscriptions" ("service_id", "consumer_repository_id") where status in ('requested', 'approved');

CREATE INDEX "subscriptions_service" on "subscriptions" ("service_id", "status");

CREATE INDEX "webhook_deliveries_received" on "webhook_deliveries" ("received_at");

CREATE INDEX "webhook_receipts_received" on "webhook_receipts" ("received_at");

CREATE INDEX "webhook_redeliveries_requested" on "webhook_redeliveries" ("requested_at");
