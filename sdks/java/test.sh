#!/usr/bin/env bash
# Compiles the library and its tests into sdks/java/.build/test-classes and runs them (offline, a few
# seconds; JDK 17+ only, no Maven or JUnit). Extra arguments go to the runner: a filter, e.g.
#   bash sdks/java/test.sh LicensedAppTest
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/.build/test-classes"
rm -rf "$out"
mkdir -p "$out"
javac -Xlint:all -Werror -encoding UTF-8 -d "$out" \
  $(find "$here/src/main/java" "$here/src/test/java" -name '*.java')
exec java -Dvectors.dir="$here/../test-vectors" -cp "$out" dev.licensing.client.TestRunner "$@"
