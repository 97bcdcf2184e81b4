#!/bin/sh
# Starts nats-server with deploy/nats/nats.conf (generated: a user per component and
# one for the event stream's set-up step,
# each allowed only its own subjects). The passwords come from the secret files
# make-secrets.sh writes (NATS_SECRETS_DIR, default /run/secrets) through the
# environment variables the configuration names. Extra arguments go to nats-server.
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
exec nats-server -c "${NATS_CONFIG:-/etc/nats/nats.conf}" "$@"
