#!/usr/bin/env bash
# Apache Kafka for the integration tests: jars from Maven Central (fetched with mvn from
# tools/kafka/pom.xml), run as a single KRaft node with the machine's Java (17 or newer).
#   kafka.sh fetch    download the jars once; prints their directory,
#                     ${RAGSTREAM_CACHE:-.cache}/kafka/<version>/libs (no network when already there)
#   kafka.sh start    start a detached broker on free loopback ports; prints
#                     RAGSTREAM_KAFKA_BOOTSTRAP=127.0.0.1:<port> (tests then use it instead of their own)
#   kafka.sh stop     stop the broker that `start` started
#   kafka.sh status   exit 0 and print its address while it runs, exit 3 otherwise
# The tests' fixture (tests/support/kafka.py) calls `fetch` itself; `start` and `stop` run the
# same launcher (tests/support/kafka_cli.py), so this broker is configured like the tests' own.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pom="$root/tools/kafka/pom.xml"
cache="${RAGSTREAM_CACHE:-$root/.cache}/kafka"
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")
libs="$cache/$version/libs"
stamp="$libs/.fetched"
python="${PYTHON:-$root/.venv/bin/python}"

fetched() {
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(sha256sum "$pom" | cut -d' ' -f1)" ]
}

fetch() {
  if fetched; then
    echo "$libs"
    return
  fi
  command -v mvn >/dev/null || { echo "kafka.sh: mvn is not installed" >&2; exit 1; }
  mkdir -p "$cache/$version"
  # Parallel test workers may fetch at once: one downloads, the others wait and reuse its jars.
  exec 9>"$cache/$version/.lock"
  flock 9
  if ! fetched; then
    local tmp
    tmp=$(mktemp -d "$cache/$version/libs.XXXXXX")
    chmod 755 "$tmp"
    local out
    if ! out=$(mvn -B -q -f "$pom" dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$tmp" 2>&1); then
      rm -rf "$tmp"
      echo "$out" >&2
      echo "kafka.sh: mvn could not fetch the Kafka $version jars (its output is above)" >&2
      exit 1
    fi
    sha256sum "$pom" | cut -d' ' -f1 >"$tmp/.fetched"
    rm -rf "$libs"
    mv "$tmp" "$libs"
  fi
  exec 9>&-
  echo "$libs"
}

launcher() {
  cd "$root"
  "$python" -m tests.support.kafka_cli "$@" --state-dir "$cache/run"
}

case "${1:-}" in
  fetch) fetch ;;
  start) jars=$(fetch) && launcher start --libs "$jars" ;;
  stop) launcher stop ;;
  status) launcher status ;;
  *) echo "usage: kafka.sh fetch|start|stop|status" >&2; exit 2 ;;
esac
