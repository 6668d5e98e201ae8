#!/usr/bin/env bash
# A real single-node Elasticsearch for the integration tests, run from the integration-test
# distribution that Maven fetches (no container runtime needed).
#
#   scripts/elasticsearch.sh fetch            print the unpacked home (downloads once, then cached)
#   scripts/elasticsearch.sh start [RUN_DIR]  start a node, wait for yellow health, print its URL
#   scripts/elasticsearch.sh stop [RUN_DIR]   SIGTERM the node's process group, SIGKILL after a grace
#   scripts/elasticsearch.sh status [RUN_DIR] print "running URL" (exit 0) or "stopped" (exit 3)
#
# Environment:
#   RAGSTREAM_CACHE            cache root (default <repo>/.cache); the distribution is unpacked
#                              into $RAGSTREAM_CACHE/elasticsearch/<version>/ and kept
#   RAGSTREAM_ES_VERSION       distribution version (default below)
#   ES_JAVA_HOME               JDK to run it with (default: Temurin 25 if installed, else PATH java)
#   RAGSTREAM_ES_START_TIMEOUT seconds to wait for yellow health (default 120)
#   RAGSTREAM_ES_OWNER_PID     stop the node when this process exits (tests pass their own pid, so
#                              a killed test run leaves no node behind)
#   RAGSTREAM_ES_JAVA_OPTS     extra JVM options appended to the fixed heap settings
#
# Elasticsearch refuses to run as root: as root the node runs as the system user ragstream-es
# (created on first use), which owns only the per-run directory; the cached home stays read-only.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ES_VERSION="${RAGSTREAM_ES_VERSION:-8.19.21}"
CACHE_ROOT="${RAGSTREAM_CACHE:-$REPO/.cache}"
ES_CACHE="$CACHE_ROOT/elasticsearch"
ES_HOME="$ES_CACHE/$ES_VERSION/elasticsearch-$ES_VERSION"
ES_USER="ragstream-es"
START_TIMEOUT="${RAGSTREAM_ES_START_TIMEOUT:-120}"
STOP_GRACE_SECONDS=30

die() {
    echo "elasticsearch.sh: $*" >&2
    exit 1
}

log() {
    echo "elasticsearch.sh: $*" >&2
}

# --- fetch -----------------------------------------------------------------------------------

fetch() {
    if [[ -f "$ES_CACHE/$ES_VERSION/.complete" ]]; then
        return 0
    fi
    command -v mvn >/dev/null || die "mvn not found: install Maven to fetch Elasticsearch"
    command -v unzip >/dev/null || die "unzip not found: install it to unpack Elasticsearch"
    command -v flock >/dev/null || die "flock (util-linux) not found"
    mkdir -p "$ES_CACHE"
    # Two test sessions starting at once must not unpack over each other.
    exec 8>"$ES_CACHE/.fetch.lock"
    flock 8
    if [[ ! -f "$ES_CACHE/$ES_VERSION/.complete" ]]; then
        fetch_locked
    fi
    flock -u 8
    exec 8>&-
}

fetch_locked() {
    local version_dir="$ES_CACHE/$ES_VERSION"
    local staging="$version_dir/.staging"
    rm -rf "$staging" "$ES_HOME"
    mkdir -p "$staging/download"
    log "fetching Elasticsearch $ES_VERSION (integ-test-zip) with Maven"
    if ! mvn -B -q -Dstyle.color=never -f "$REPO/tools/elasticsearch/pom.xml" validate \
        -Des.version="$ES_VERSION" -Des.download.dir="$staging/download" >&2; then
        rm -rf "$staging"
        die "Maven could not fetch org.elasticsearch.distribution.integ-test-zip:elasticsearch:$ES_VERSION:zip"
    fi
    unzip -q "$staging/download/elasticsearch-$ES_VERSION.zip" -d "$staging" \
        || die "could not unpack elasticsearch-$ES_VERSION.zip"
    [[ -x "$staging/elasticsearch-$ES_VERSION/bin/elasticsearch" ]] \
        || die "unexpected archive layout: no elasticsearch-$ES_VERSION/bin/elasticsearch"
    # The node runs as another user when we are root: it must be able to read the home.
    chmod -R a+rX "$staging/elasticsearch-$ES_VERSION"
    mv "$staging/elasticsearch-$ES_VERSION" "$ES_HOME"
    rm -rf "$staging"
    touch "$version_dir/.complete"
}

# --- java and user -----------------------------------------------------------------------------

java_home() {
    if [[ -n "${ES_JAVA_HOME:-}" ]]; then
        echo "$ES_JAVA_HOME"
    elif [[ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ]]; then
        echo /usr/lib/jvm/temurin-25-jdk-amd64
    elif command -v java >/dev/null; then
        dirname "$(dirname "$(readlink -f "$(command -v java)")")"
    else
        die "no Java found: set ES_JAVA_HOME (Elasticsearch $ES_VERSION needs Java 17 or newer)"
    fi
}

ensure_user() {
    if id -u "$ES_USER" >/dev/null 2>&1; then
        return 0
    fi
    log "creating system user $ES_USER (Elasticsearch refuses to run as root)"
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
        "$ES_USER" || id -u "$ES_USER" >/dev/null 2>&1 \
        || die "could not create system user $ES_USER"
}


# --- start -----------------------------------------------------------------------------------

write_config() {
    local run_dir="$1"
    mkdir -p "$run_dir/config" "$run_dir/data" "$run_dir/logs" "$run_dir/tmp"
    cp "$ES_HOME/config/jvm.options" "$ES_HOME/config/log4j2.properties" "$run_dir/config/"
    # Ports 0: the kernel picks free loopback ports (no race between picking and binding);
    # node.portsfile makes the node write the bound addresses to logs/http.ports.
    cat >"$run_dir/config/elasticsearch.yml" <<EOF
cluster.name: ragstream-test
node.name: ragstream-test-node
discovery.type: single-node
network.host: 127.0.0.1
http.host: 127.0.0.1
http.port: 0
transport.port: 0
node.portsfile: true
path.data: $run_dir/data
path.logs: $run_dir/logs
xpack.security.enabled: false
cluster.routing.allocation.disk.threshold_enabled: false
# Indices are created explicitly with their mappings; a write to a missing index is a bug.
action.auto_create_index: false
EOF
}

is_running() {
    local run_dir="$1" pid
    [[ -f "$run_dir/pid" ]] || return 1
    pid="$(cat "$run_dir/pid")"
    kill -0 "$pid" 2>/dev/null
}

launch() {
    local run_dir="$1" java
    local -a as_user=()
    java="$(java_home)"
    [[ -x "$java/bin/java" ]] || die "no java at $java/bin/java (ES_JAVA_HOME)"
    if [[ "$(id -u)" -eq 0 ]]; then
        ensure_user
        as_user=(setpriv --reuid="$ES_USER" --regid="$ES_USER" --init-groups --)
        chown -R "$ES_USER:" "$run_dir"
        "${as_user[@]}" test -r "$ES_HOME/lib/elasticsearch-$ES_VERSION.jar" \
            || die "$ES_USER cannot read $ES_HOME: put RAGSTREAM_CACHE where others may read"
    fi
    # setsid: the launcher and the server JVM share one new process group, which stop kills.
    # A background job of a non-interactive shell is no group leader, so setsid does not fork
    # and $! is the group id.
    (
        cd "$run_dir"
        exec setsid "${as_user[@]}" env ES_JAVA_HOME="$java" ES_PATH_CONF="$run_dir/config" \
            ES_TMPDIR="$run_dir/tmp" ES_JAVA_OPTS="-Xms512m -Xmx512m ${RAGSTREAM_ES_JAVA_OPTS:-}" \
            "$ES_HOME/bin/elasticsearch"
    ) </dev/null >"$run_dir/console.log" 2>&1 &
    echo "$!" >"$run_dir/pid"
}

wait_healthy() {
    local run_dir="$1" deadline address
    deadline=$((SECONDS + START_TIMEOUT))
    while ((SECONDS < deadline)); do
        is_running "$run_dir" || return 1
        if [[ -s "$run_dir/logs/http.ports" ]]; then
            address="$(head -n 1 "$run_dir/logs/http.ports")"
            if curl -sf --max-time 5 -o /dev/null \
                "http://$address/_cluster/health?wait_for_status=yellow&timeout=1s"; then
                echo "http://$address" >"$run_dir/url"
                return 0
            fi
        fi
        sleep 0.5
    done
    return 1
}

start_watchdog() {
    local run_dir="$1" owner="$2" pid
    pid="$(cat "$run_dir/pid")"
    (
        while kill -0 "$owner" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do
            sleep 2
        done
        if kill -0 "$pid" 2>/dev/null; then
            stop_node "$run_dir"
        fi
    ) </dev/null >/dev/null 2>&1 &
}

start_node() {
    local run_dir="$1" started
    command -v curl >/dev/null || die "curl not found"
    if is_running "$run_dir"; then
        die "a node already runs from $run_dir ($(cat "$run_dir/url" 2>/dev/null || echo starting))"
    fi
    fetch
    rm -rf "$run_dir/data" "$run_dir/logs" "$run_dir/url" "$run_dir/pid"
    write_config "$run_dir"
    started=$SECONDS
    launch "$run_dir"
    if [[ -n "${RAGSTREAM_ES_OWNER_PID:-}" ]]; then
        start_watchdog "$run_dir" "$RAGSTREAM_ES_OWNER_PID"
    fi
    if ! wait_healthy "$run_dir"; then
        if is_running "$run_dir"; then
            log "Elasticsearch $ES_VERSION did not reach yellow health within ${START_TIMEOUT}s"
        else
            log "Elasticsearch $ES_VERSION exited during start-up"
        fi
        log "last lines of $run_dir/console.log:"
        tail -n 40 "$run_dir/console.log" >&2 || true
        stop_node "$run_dir" >/dev/null 2>&1 || true
        exit 1
    fi
    log "Elasticsearch $ES_VERSION healthy after $((SECONDS - started))s (java $(java_home))"
    cat "$run_dir/url"
}

# --- stop and status -------------------------------------------------------------------------

stop_node() {
    local run_dir="$1" pid deadline
    if ! is_running "$run_dir"; then
        rm -f "$run_dir/pid"
        return 0
    fi
    pid="$(cat "$run_dir/pid")"
    kill -TERM -- "-$pid" 2>/dev/null || true
    deadline=$((SECONDS + STOP_GRACE_SECONDS))
    while kill -0 -- "-$pid" 2>/dev/null && ((SECONDS < deadline)); do
        sleep 0.2
    done
    if kill -0 -- "-$pid" 2>/dev/null; then
        log "node did not stop within ${STOP_GRACE_SECONDS}s: SIGKILL"
        kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    rm -f "$run_dir/pid" "$run_dir/url"
}

status_node() {
    local run_dir="$1"
    if is_running "$run_dir" && [[ -f "$run_dir/url" ]]; then
        echo "running $(cat "$run_dir/url")"
        return 0
    fi
    echo "stopped"
    return 3
}

main() {
    local command="${1:-}" run_dir="${2:-$ES_CACHE/run}"
    case "$command" in
        fetch)
            fetch
            echo "$ES_HOME"
            ;;
        start) start_node "$(mkdir -p "$run_dir" && cd "$run_dir" && pwd)" ;;
        stop) stop_node "$run_dir" ;;
        status) status_node "$run_dir" ;;
        *)
            echo "usage: $0 fetch|start|stop|status [RUN_DIR]" >&2
            exit 2
            ;;
    esac
}

main "$@"
