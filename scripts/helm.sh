#!/usr/bin/env bash
# Runs helm, built from its Go module into .cache/tools/bin on first use (a few minutes once;
# later calls reuse the binary when its version matches HELM_VERSION).
#   helm.sh path                 print the helm binary's path (installing it first)
#   helm.sh lint                 helm lint --strict, default values and the production example
#   helm.sh template [ARGS...]   helm template of the chart (extra helm arguments appended)
#   helm.sh check                lint, then template with both values files (output discarded)
#   helm.sh helm ARGS...         any other helm command
set -euo pipefail
cd "$(dirname "$0")/.."
HELM_VERSION=v3.22.0
tools="$PWD/.cache/tools"
helm="$tools/bin/helm"
chart=deploy/helm/ragstream
production=deploy/helm/examples/production-values.yaml

installed_version() {
  if [ -x "$helm" ]; then
    "$helm" version --template '{{.Version}}' 2>/dev/null || true
  fi
}

install_helm() {
  [ "$(installed_version)" = "$HELM_VERSION" ] && return 0
  mkdir -p "$tools/bin"
  # One build at a time: parallel test runs wait for the first one instead of racing it.
  exec 9>"$tools/helm.lock"
  flock 9
  [ "$(installed_version)" = "$HELM_VERSION" ] && return 0
  local go
  go=$(command -v go || echo /usr/local/go/bin/go)
  if [ ! -x "$go" ]; then
    echo "helm.sh: the Go toolchain is needed to build helm and was not found" >&2
    return 1
  fi
  echo "helm.sh: building helm $HELM_VERSION (first use only)" >&2
  local work="$tools/go" staging gomod kube
  export GOPATH="$work" GOMODCACHE="$work/mod" GOCACHE="$work/cache" GOFLAGS=-modcacherw
  gomod=$("$go" mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  # As helm's Makefile does: the Kubernetes version that templates and lint assume is the
  # client-go minor helm was built with (v0.N -> 1.N); otherwise helm assumes an old default.
  kube=$(sed -n 's/^[[:space:]]*k8s.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$gomod")
  if [ -z "$kube" ]; then
    echo "helm.sh: no k8s.io/client-go version in $gomod" >&2
    return 1
  fi
  local pkg=helm.sh/helm/v3
  local ldflags="-s -w -X $pkg/internal/version.version=$HELM_VERSION"
  for var in "$pkg/pkg/lint/rules" "$pkg/pkg/chartutil"; do
    ldflags+=" -X $var.k8sVersionMajor=1 -X $var.k8sVersionMinor=$kube"
  done
  staging=$(mktemp -d "$tools/helm-build.XXXXXX")
  CGO_ENABLED=0 GOBIN="$staging" "$go" install -ldflags "$ldflags" "$pkg/cmd/helm@$HELM_VERSION"
  mv -f "$staging/helm" "$helm"
  rm -rf "$staging" "$work"
  if [ "$(installed_version)" != "$HELM_VERSION" ]; then
    echo "helm.sh: built helm reports '$(installed_version)', expected $HELM_VERSION" >&2
    return 1
  fi
}

install_helm
# Keep helm's own caches and config inside the tool folder, never in the user's home.
export HELM_CACHE_HOME="$tools/helm/cache" HELM_CONFIG_HOME="$tools/helm/config"
export HELM_DATA_HOME="$tools/helm/data"
lint() {
  "$helm" lint --strict "$chart"
  "$helm" lint --strict "$chart" -f "$production"
}
case "${1:-check}" in
  path) echo "$helm" ;;
  lint) lint ;;
  template) shift; "$helm" template ragstream "$chart" "$@" ;;
  check)
    lint
    # Auth is on by default and needs a tokens Secret; the defaults are rendered with one named.
    "$helm" template ragstream "$chart" --set auth.tokensSecret.name=ragstream-auth >/dev/null
    "$helm" template ragstream "$chart" -f "$production" >/dev/null
    echo "helm.sh: lint and template passed" ;;
  helm) shift; "$helm" "$@" ;;
  *) echo "usage: helm.sh path|lint|template [ARGS]|check|helm ARGS" >&2; exit 2 ;;
esac
