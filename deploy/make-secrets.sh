#!/bin/sh
# Writes the secrets docker-compose.yml mounts (deploy/secrets/, git-ignored):
# random keys and a self-signed TLS certificate for the gateway. Replace
# tls.crt/tls.key with a real certificate for anything public; the gateway
# reloads them on SIGHUP (docker compose kill -s HUP gateway).
#   sh deploy/make-secrets.sh [hostname]
set -eu
dir="$(dirname "$0")/secrets"
host="${1:-localhost}"
mkdir -p "$dir"
umask 077
for name in internal_token api_key_pepper; do
  [ -s "$dir/$name" ] || openssl rand -hex 32 > "$dir/$name"
done
for name in signing_key_secret webhook_secret_key; do
  [ -s "$dir/$name" ] || openssl rand -base64 32 > "$dir/$name"
done
if [ ! -s "$dir/tls.key" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=$host" \
    -addext "subjectAltName=DNS:$host,IP:127.0.0.1" -keyout "$dir/tls.key" -out "$dir/tls.crt" 2>/dev/null
fi
# The containers run as uid 1000 (node) and read these through bind-mounted
# secrets: the files are readable, the folder is closed to other host users.
chmod 700 "$dir"
chmod 644 "$dir"/*
echo "secrets written to $dir"
