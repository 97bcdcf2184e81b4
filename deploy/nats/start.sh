#!/bin/sh
# Starts nats-server with deploy/nats/nats.conf (generated: a user per component and
# one for the event stream's set-up step,
# each allowed only its own subjects). The passwords come from the secret files
# make-secrets.sh writes (NATS_SECRETS_DIR, default /run/secrets) through the
# environment variables the configuration names. Extra arguments go to nats-server.
set -eu
dir="${NATS_SECRETS_DIR:-/run/secrets}"
for user in account product license checkout webhook notification gateway setup; do
  var="NATS_PASSWORD_$(echo "$user" | tr '[:lower:]' '[:upper:]')"
  # nats-server parses a referenced variable as a configuration value: quoted, it stays a string.
  export "$var=\"$(tr -d '\n' < "$dir/nats_password_$user")\""
done
exec nats-server -c "${NATS_CONFIG:-/etc/nats/nats.conf}" "$@"
