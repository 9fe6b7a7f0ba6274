#!/bin/sh
# The first start initialises the data directory with POSTGRES_USER / POSTGRES_PASSWORD /
# POSTGRES_DB, as the official image does; every start then runs PostgreSQL in the foreground.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  password_file=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$password_file"
  initdb --username="$POSTGRES_USER" --pwfile="$password_file" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$password_file"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  pg_ctl --wait --options='-c listen_addresses=' start >/dev/null
  if [ "${POSTGRES_DB:-$POSTGRES_USER}" != postgres ]; then
    createdb --username="$POSTGRES_USER" "${POSTGRES_DB:-$POSTGRES_USER}"
  fi
  pg_ctl --wait stop >/dev/null
fi
exec postgres -c listen_addresses='*'
