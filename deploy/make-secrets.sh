#!/bin/sh
# Writes the secrets docker-compose.yml mounts (deploy/secrets/, git-ignored):
# random keys and a self-signed TLS certificate for the gateway. Replace
# tls.crt/tls.key with a real certificate for anything public; the gateway
# reloads them on SIGHUP (docker compose kill -s HUP gateway).
# The Stripe keys cannot be made up: they are taken from STRIPE_SECRET_KEY and
# STRIPE_WEBHOOK_SECRET when set, else a placeholder is written that the
# checkout service refuses at start (put your keys in those two files).
#   STRIPE_SECRET_KEY=sk_live_… STRIPE_WEBHOOK_SECRET=whsec_… MAIL_URL=smtp://… sh deploy/make-secrets.sh [hostname]
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
[ -s "$dir/stripe_secret_key" ] || printf '%s\n' "${STRIPE_SECRET_KEY:-replace-me: your Stripe secret key, sk_live_... (docs/operations.md, Payments)}" > "$dir/stripe_secret_key"
[ -s "$dir/stripe_webhook_secret" ] || printf '%s\n' "${STRIPE_WEBHOOK_SECRET:-replace-me: the whsec_... signing secret of your Stripe webhook endpoint}" > "$dir/stripe_webhook_secret"
# Sign-up mail: an SMTP URL with its credentials (smtp://user:pass@host:587); empty closes dashboard sign-up.
[ -e "$dir/mail_url" ] || printf '%s' "${MAIL_URL:-}" > "$dir/mail_url"
if [ ! -s "$dir/tls.key" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=$host" \
    -addext "subjectAltName=DNS:$host,IP:127.0.0.1" -keyout "$dir/tls.key" -out "$dir/tls.crt" 2>/dev/null
fi
# The containers run as uid 1000 (node) and read these through bind-mounted
# secrets: the files are readable, the folder is closed to other host users.
chmod 700 "$dir"
chmod 644 "$dir"/*
echo "secrets written to $dir"
