#!/bin/sh
# Starts redis-server with ACL users only: the default user is off, and the
# gateway's and the web component's own users may touch nothing but the rate-limit keys
# (RATE_LIMIT_PREFIX, default licensing:rl) with the commands rate limiting
# needs: no KEYS/SCAN over other data, no FLUSH*, no CONFIG, no pub/sub.
# Its password comes from the secret file make-secrets.sh writes
# (REDIS_SECRETS_DIR, default /run/secrets). Extra arguments go to redis-server.
set -eu
dir="${REDIS_SECRETS_DIR:-/run/secrets}"
password="$(tr -d '\n' < "$dir/redis_password_gateway")"
# The web component's user: the same keys and commands (page throttles, the account's hourly quota).
web_password="$(tr -d '\n' < "$dir/redis_password_web")"
exec redis-server --save '' --appendonly no \
  --user default off \
  --user gateway on ">$password" resetkeys "~${RATE_LIMIT_PREFIX:-licensing:rl}:*" resetchannels \
    -@all +@read +@write +@scripting +@transaction +@connection +info -keys -scan -randomkey -flushall -flushdb -swapdb -move -migrate \
  --user web on ">$web_password" resetkeys "~${RATE_LIMIT_PREFIX:-licensing:rl}:*" resetchannels \
    -@all +@read +@write +@scripting +@transaction +@connection +info -keys -scan -randomkey -flushall -flushdb -swapdb -move -migrate \
  "$@"
