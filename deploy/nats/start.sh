#!/bin/sh
# Starts nats-server with deploy/nats/nats.conf (generated: a user per component and
# one for the event stream's set-up step,
# each allowed only its own subjects). The passwords come from the secret files
# make-secrets.sh writes (NATS_SECRETS_DIR, default /run/secrets) through the
# environment variables the configuration names. Extra arguments go to nats-server; the cluster's
# settings (NATS_CLUSTER_*, below) become its cluster flags.
# Each user also has an alternate login, <user>_alt, with the same permissions, for rotating its
# password with an overlap (docs/operations.md, "Rotating secrets"): its password is the file
# nats_password_<user>_alt when it is not empty, else a random one nobody knows (the login is closed).
# make-secrets.sh writes the _alt files empty; a rotation fills one slot and later empties the other
# (an empty nats_password_<user> closes that login the same way).
set -eu
dir="${NATS_SECRETS_DIR:-/run/secrets}"
for user in account product license checkout webhook notification gateway setup; do
  for login in "$user" "${user}_alt"; do
    var="NATS_PASSWORD_$(echo "$login" | tr '[:lower:]' '[:upper:]')"
    if [ -s "$dir/nats_password_$login" ]; then
      pass="$(tr -d '\n' < "$dir/nats_password_$login")"
    elif [ "$login" = "$user" ] && [ ! -e "$dir/nats_password_$login" ]; then
      echo "start.sh: $dir/nats_password_$login is missing" >&2
      exit 1
    else
      pass="$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
    fi
    # nats-server parses a referenced variable as a configuration value: quoted, it stays a string.
    export "$var=\"$pass\""
  done
done
# A node of a JetStream cluster (Kubernetes production: deploy/k8s/components/nats; docs/operations.md,
# "NATS cluster") when NATS_CLUSTER_NAME is set: it takes routes from the other nodes on
# NATS_CLUSTER_LISTEN (host:port, default 0.0.0.0:6222) and solicits every route of NATS_CLUSTER_ROUTES
# (comma-separated nats://host:port, its own may be among them: a server drops a route to itself), under
# the name NATS_SERVER_NAME (default: the host name, which a StatefulSet's pod keeps across restarts:
# JetStream knows its peers by name, so a node must come back with the one it had). Unset, the server
# runs alone (compose). The same flags on nats-server 2.9 and 2.10.
if [ -n "${NATS_CLUSTER_NAME:-}" ]; then
  if [ -z "${NATS_CLUSTER_ROUTES:-}" ]; then
    echo "start.sh: NATS_CLUSTER_NAME is set but NATS_CLUSTER_ROUTES is empty: list every node's route URL" >&2
    exit 1
  fi
  set -- --server_name "${NATS_SERVER_NAME:-$(hostname)}" --cluster_name "$NATS_CLUSTER_NAME" \
    --cluster "nats://${NATS_CLUSTER_LISTEN:-0.0.0.0:6222}" --routes "$NATS_CLUSTER_ROUTES" "$@"
fi
exec nats-server -c "${NATS_CONFIG:-/etc/nats/nats.conf}" "$@"
