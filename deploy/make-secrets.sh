#!/bin/sh
# Writes the secrets docker-compose.yml mounts (deploy/secrets/, git-ignored;
# SECRETS_DIR writes them elsewhere): random keys, a self-signed TLS certificate
# for the gateway, and the internal trust material:
#   - internal_token_<caller>: each caller's own gRPC token (gateway, license,
#     checkout, operator), and internal_callers_<service>: the SHA-256 digests of
#     the tokens of the callers that service accepts (never the tokens);
#   - an internal CA (ca.crt) and a certificate per component (<name>.crt/.key,
#     common name = the component) for the optional gRPC mTLS;
#   - nats_password_<component>, nats_password_setup (the event stream's set-up step),
#     redis_password_gateway, mongo_password_<service>,
#     mongo_root_password: the users the init steps create. Replace
# tls.crt/tls.key with a real certificate for anything public; the gateway
# reloads them on SIGHUP (docker compose kill -s HUP gateway).
# The Stripe keys cannot be made up: they are taken from STRIPE_SECRET_KEY and
# STRIPE_WEBHOOK_SECRET when set, else a placeholder is written that the
# checkout service refuses at start (put your keys in those two files).
#   STRIPE_SECRET_KEY=sk_live_… STRIPE_WEBHOOK_SECRET=whsec_… MAIL_URL=smtp://… sh deploy/make-secrets.sh [hostname]
set -eu
dir="${SECRETS_DIR:-$(dirname "$0")/secrets}"
host="${1:-localhost}"
mkdir -p "$dir"
umask 077
for name in api_key_pepper; do
  [ -s "$dir/$name" ] || openssl rand -hex 32 > "$dir/$name"
done
for name in signing_key_secret webhook_secret_key; do
  [ -s "$dir/$name" ] || openssl rand -base64 32 > "$dir/$name"
done
[ -s "$dir/stripe_secret_key" ] || printf '%s\n' "${STRIPE_SECRET_KEY:-replace-me: your Stripe secret key, sk_live_... (docs/operations.md, Payments)}" > "$dir/stripe_secret_key"
[ -s "$dir/stripe_webhook_secret" ] || printf '%s\n' "${STRIPE_WEBHOOK_SECRET:-replace-me: the whsec_... signing secret of your Stripe webhook endpoint}" > "$dir/stripe_webhook_secret"
# Sign-up mail: an SMTP URL with its credentials (smtp://<user>:<password>@host:587); empty closes dashboard sign-up.
[ -e "$dir/mail_url" ] || printf '%s' "${MAIL_URL:-}" > "$dir/mail_url"
if [ ! -s "$dir/tls.key" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=$host" \
    -addext "subjectAltName=DNS:$host,IP:127.0.0.1" -keyout "$dir/tls.key" -out "$dir/tls.crt" 2>/dev/null
fi
# Internal gRPC: one token per caller; each service gets the digests of its callers' tokens.
for caller in gateway license checkout notification operator; do
  [ -s "$dir/internal_token_$caller" ] || openssl rand -hex 32 > "$dir/internal_token_$caller"
done
digest() { printf '%s=sha256:%s' "$1" "$(tr -d '\n' < "$dir/internal_token_$1" | openssl dgst -sha256 -r | cut -d' ' -f1)"; }
callers() { service="$1"; shift; out=""; for c in "$@"; do out="$out${out:+,}$(digest "$c")"; done; printf '%s\n' "$out" > "$dir/internal_callers_$service"; }
callers account gateway operator notification
callers product gateway license checkout notification
callers license gateway checkout notification
callers checkout gateway
callers webhook gateway
callers notification gateway
# Passwords of the NATS, Redis and MongoDB users (docs/operations.md, Internal trust).
for name in nats_password_account nats_password_product nats_password_license nats_password_checkout nats_password_webhook nats_password_notification nats_password_gateway nats_password_setup \
  redis_password_gateway mongo_root_password mongo_password_account mongo_password_product mongo_password_license mongo_password_checkout mongo_password_webhook mongo_password_notification; do
  [ -s "$dir/$name" ] || openssl rand -hex 24 > "$dir/$name"
done
# Connection URLs with each component's own user (read through MONGO_URL_FILE and REDIS_URL_FILE).
for service in account product license checkout webhook notification; do
  [ -s "$dir/mongo_url_$service" ] || printf 'mongodb://%s:%s@mongodb:27017/licensing_%s?authSource=licensing_%s\n' "$service" "$(cat "$dir/mongo_password_$service")" "$service" "$service" > "$dir/mongo_url_$service"
done
[ -s "$dir/redis_url_gateway" ] || printf 'redis://gateway:%s@redis:6379\n' "$(cat "$dir/redis_password_gateway")" > "$dir/redis_url_gateway"
# Internal CA and one certificate per component for the optional gRPC mTLS (GRPC_TLS_*_FILE),
# and one for the NATS server (optional TLS to NATS: NATS_TLS_CA_FILE=ca.crt).
if [ ! -s "$dir/ca.key" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 -subj "/CN=licensing internal CA" -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
fi
for name in gateway account product license checkout webhook notification operator nats; do
  [ -s "$dir/$name.key" ] && continue
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$name" -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
  printf 'subjectAltName=DNS:%s,DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' "$name" > "$dir/$name.ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 825 -extfile "$dir/$name.ext" -out "$dir/$name.crt" 2>/dev/null
  rm -f "$dir/$name.csr" "$dir/$name.ext"
done
# The containers run as uid 1000 (node) and read these through bind-mounted
# secrets: the files are readable, the folder is closed to other host users.
chmod 700 "$dir"
chmod 644 "$dir"/*
echo "secrets written to $dir"
