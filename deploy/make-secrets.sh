#!/bin/sh
# Writes the secrets docker-compose.yml mounts (deploy/secrets/, git-ignored;
# SECRETS_DIR writes them elsewhere): random keys, a self-signed TLS certificate
# for the gateway, and the internal trust material:
#   - internal_token_<caller>: each caller's own gRPC token (gateway, web, license,
#     checkout, notification, product, operator), and internal_callers_<service>: the SHA-256 digests of
#     the tokens of the callers that service accepts (never the tokens);
#   - an internal CA (ca.crt) and a certificate per component (<name>.crt/.key,
#     common name = the component) for the optional gRPC mTLS;
#   - nats_password_<component>, nats_password_setup (the event stream's set-up step),
#     redis_password_gateway, redis_password_web, mongo_password_<service>,
#     mongo_root_password: the users the init steps create. Replace
# tls.crt/tls.key with a real certificate for anything public; the gateway
# reloads them on SIGHUP (docker compose kill -s HUP gateway).
# The Stripe keys cannot be made up: they are taken from STRIPE_SECRET_KEY and
# STRIPE_WEBHOOK_SECRET when set, else a placeholder is written that the
# checkout service refuses at start (put your keys in those two files). The key of an S3 store for
# release files (ARTIFACT_STORE_URL; docs/operations.md, "Release files") is taken from AWS_ACCESS_KEY_ID
# and AWS_SECRET_ACCESS_KEY when set, into aws_credentials (an AWS shared-credentials file), else that
# file only shows the form (unused while the files stay in the gateway's volume).
#   STRIPE_SECRET_KEY=sk_live_… STRIPE_WEBHOOK_SECRET=whsec_… MAIL_URL=smtp://… sh deploy/make-secrets.sh [hostname]
# Existing secrets are kept. Each NATS password and internal token has a second slot, <name>_alt
# (written empty: that login or token is closed), for rotating it with an overlap.
#
# Rotation (docs/operations.md, "Rotating secrets"), one step at a time, rolled out between steps:
#   sh deploy/make-secrets.sh --rotate <name>    step 1: a new value beside the current one
#     signing_key_secret, webhook_secret_key: appends a new key kN:<base64> (the current one still seals)
#     api_key_pepper: appends a new version pN:<hex> (a bare pepper becomes legacy:<pepper>)
#     nats_password_<login>: writes a new password into the empty one of its two slots (<login>_alt,
#       or <login> when the previous rotation moved to _alt)
#     internal_token_<caller>: likewise, and adds the new token's digest to every internal_callers_<service>
#   sh deploy/make-secrets.sh --promote <name>   step 2 of a keyring or pepper: the newest entry first
#   sh deploy/make-secrets.sh --retire <name>    the last step: keyring or pepper: only the first entry
#     is kept; a NATS password or token slot (the one no longer used) is emptied (closed), and the
#     token's digest leaves internal_callers_*
set -eu
dir="${SECRETS_DIR:-$(dirname "$0")/secrets}"
mkdir -p "$dir"
umask 077

# The digests of the callers' tokens (both slots, when both are set) each service accepts.
digests() {
  out=""
  for c in "$@"; do
    for f in "$dir/internal_token_$c" "$dir/internal_token_${c}_alt"; do
      [ -s "$f" ] || continue
      out="$out${out:+,}$c=sha256:$(tr -d '\n' < "$f" | openssl dgst -sha256 -r | cut -d' ' -f1)"
    done
  done
  printf '%s\n' "$out"
}
callers_files() {
  digests gateway web operator notification > "$dir/internal_callers_account"
  digests gateway web license checkout notification > "$dir/internal_callers_product"
  digests gateway web checkout notification product > "$dir/internal_callers_license"
  digests gateway web > "$dir/internal_callers_checkout"
  digests gateway web license > "$dir/internal_callers_webhook"
  digests gateway web > "$dir/internal_callers_notification"
}
entries() { { tr -d '\n' < "$dir/$1" | tr ',' '\n'; echo; } | sed '/^$/d'; }
join_entries() { paste -sd, -; }
fail() { echo "make-secrets.sh: $*" >&2; exit 1; }

if [ "${1:-}" = "--rotate" ] || [ "${1:-}" = "--promote" ] || [ "${1:-}" = "--retire" ]; then
  mode="$1"
  name="${2:-}"
  [ -n "$name" ] || fail "$mode needs a secret name (docs/operations.md, Rotating secrets)"
  case "$name" in
    signing_key_secret | webhook_secret_key | api_key_pepper)
      [ -s "$dir/$name" ] || fail "$dir/$name is missing: run make-secrets.sh first"
      n="$(entries "$name" | wc -l | tr -d ' ')"
      if [ "$name" = api_key_pepper ]; then prefix=p max=4; else prefix=k max=8; fi
      case "$mode" in
        --rotate)
          [ "$n" -lt "$max" ] || fail "$name has $n entries, at most $max: finish the rotation under way (--retire $name)"
          i=2
          while entries "$name" | grep -q "^$prefix$i:"; do i=$((i + 1)); done
          if [ "$name" = api_key_pepper ]; then new="$(openssl rand -hex 32)"; else new="$(openssl rand -base64 32)"; fi
          # A bare pepper is the version legacy; a bare sealing key stays bare (its id is legacy).
          { entries "$name" | sed "/:/!{ s/^/$([ "$name" = api_key_pepper ] && echo legacy:)/; }"; echo "$prefix$i:$new"; } | join_entries > "$dir/$name.new"
          ;;
        --promote)
          [ "$n" -ge 2 ] || fail "$name has one entry: --rotate $name first"
          { entries "$name" | tail -n 1; entries "$name" | sed '$d'; } | join_entries > "$dir/$name.new"
          ;;
        --retire)
          entries "$name" | head -n 1 | join_entries > "$dir/$name.new"
          ;;
      esac
      mv "$dir/$name.new" "$dir/$name"
      ;;
    nats_password_* | internal_token_*)
      base="${name%_alt}"
      [ -e "$dir/$base" ] || fail "$dir/$base is missing: run make-secrets.sh first (or $name is not a secret it writes)"
      [ -e "$dir/${base}_alt" ] || : > "$dir/${base}_alt"
      case "$mode" in
        --rotate)
          if [ ! -s "$dir/${base}_alt" ]; then slot="${base}_alt"
          elif [ ! -s "$dir/$base" ]; then slot="$base"
          else fail "both $base and ${base}_alt are set: a rotation is under way; --retire the slot no longer used first"
          fi
          openssl rand -hex "$(case "$base" in nats_password_*) echo 24 ;; *) echo 32 ;; esac)" > "$dir/$slot"
          name="$slot"
          ;;
        --retire)
          other="$base"; [ "$name" = "$base" ] && other="${base}_alt"
          [ -s "$dir/$other" ] || fail "$other is empty: retiring $name would leave no way in"
          : > "$dir/$name"
          ;;
        --promote) fail "--promote is for keyrings and the pepper; $name needs no such step" ;;
      esac
      case "$base" in internal_token_*) callers_files ;; esac
      ;;
    *) fail "cannot rotate $name: one of signing_key_secret, webhook_secret_key, api_key_pepper, nats_password_<login>, internal_token_<caller>" ;;
  esac
  chmod 644 "$dir"/*
  echo "$mode $name: written in $dir (roll it out: docs/operations.md, Rotating secrets)"
  exit 0
fi

case "${1:-}" in -*) fail "unknown option $1: sh deploy/make-secrets.sh [hostname], or --rotate | --promote | --retire <name>" ;; esac
host="${1:-localhost}"
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
# Created once (an emptied slot stays empty: it was retired); the _alt slots start empty (closed).
for caller in gateway web license checkout notification product operator; do
  [ -e "$dir/internal_token_$caller" ] || openssl rand -hex 32 > "$dir/internal_token_$caller"
  [ -e "$dir/internal_token_${caller}_alt" ] || : > "$dir/internal_token_${caller}_alt"
done
callers_files
# Passwords of the NATS, Redis and MongoDB users (docs/operations.md, Internal trust).
for login in account product license checkout webhook notification gateway setup; do
  [ -e "$dir/nats_password_$login" ] || openssl rand -hex 24 > "$dir/nats_password_$login"
  [ -e "$dir/nats_password_${login}_alt" ] || : > "$dir/nats_password_${login}_alt"
done
for name in redis_password_gateway redis_password_web mongo_root_password mongo_password_account mongo_password_product mongo_password_license mongo_password_checkout mongo_password_webhook mongo_password_notification; do
  [ -s "$dir/$name" ] || openssl rand -hex 24 > "$dir/$name"
done
# Connection URLs with each component's own user (read through MONGO_URL_FILE and REDIS_URL_FILE).
for service in account product license checkout webhook notification; do
  [ -s "$dir/mongo_url_$service" ] || printf 'mongodb://%s:%s@mongodb:27017/licensing_%s?authSource=licensing_%s\n' "$service" "$(cat "$dir/mongo_password_$service")" "$service" "$service" > "$dir/mongo_url_$service"
done
[ -s "$dir/redis_url_gateway" ] || printf 'redis://gateway:%s@redis:6379\n' "$(cat "$dir/redis_password_gateway")" > "$dir/redis_url_gateway"
[ -s "$dir/redis_url_web" ] || printf 'redis://web:%s@redis:6379\n' "$(cat "$dir/redis_password_web")" > "$dir/redis_url_web"
# The S3 store's key, read by the AWS SDK through AWS_SHARED_CREDENTIALS_FILE.
if [ ! -s "$dir/aws_credentials" ]; then
  if [ -n "${AWS_ACCESS_KEY_ID:-}" ] && [ -n "${AWS_SECRET_ACCESS_KEY:-}" ]; then
    printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" > "$dir/aws_credentials"
  else
    printf '%s\n' '# The key of the S3 store ARTIFACT_STORE_URL names (docs/operations.md, "Release files"): uncomment and fill in.' \
      '# [default]' '# aws_access_key_id = AKIA...' '# aws_secret_access_key = ...' > "$dir/aws_credentials"
  fi
fi
# Internal CA and one certificate per component for the optional gRPC mTLS (GRPC_TLS_*_FILE),
# and one for the NATS server (optional TLS to NATS: NATS_TLS_CA_FILE=ca.crt).
if [ ! -s "$dir/ca.key" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 -subj "/CN=licensing internal CA" -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
fi
for name in gateway web account product license checkout webhook notification operator nats; do
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
