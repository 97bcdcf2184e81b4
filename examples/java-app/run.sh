#!/usr/bin/env bash
# Compiles App.java with the SDK's sources (sdks/java, JDK 17+, nothing else) into .build and runs it:
#   LICENSING_BASE_URL=https://licensing.example.com LICENSE_KEY=7K3QF-… examples/java-app/run.sh
# With --compile-only it only compiles (the repository's tests check that it does).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sdk="$here/../../sdks/java/src/main/java"
out="$here/.build"
rm -rf "$out"
mkdir -p "$out"
javac -encoding UTF-8 -d "$out" $(find "$sdk" -name '*.java') "$here/App.java"
[ "${1:-}" = "--compile-only" ] && exit 0
exec java -cp "$out" App "$@"
