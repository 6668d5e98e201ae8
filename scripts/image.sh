#!/usr/bin/env bash
# Builds the repository's Dockerfile without a Docker engine, with buildah (daemonless, chroot
# isolation), into a container storage of its own under .cache/image. The Dockerfile is used
# unchanged but for its PYTHON_IMAGE argument: the base is made once from Debian packages
# (debootstrap of the Debian release the Dockerfile's default base names, with its Python),
# from the mirror this machine's apt sources name. buildah and debootstrap are installed with
# apt-get when missing (root, as in CI). The image's tag is a hash of the Dockerfile, the base
# and every file of the build context, so an unchanged tree reuses the image it built before.
#   image.sh [build]        build if needed; print the image's name
#   image.sh name           print the name the tree's image has (nothing is built)
#   image.sh info           the built image's size and layers
#   image.sh clean          remove the working containers and unmount the storage
#   image.sh buildah ARGS   buildah on this storage, e.g. image.sh buildah images
set -euo pipefail
cd "$(dirname "$0")/.."
cache="$PWD/.cache/image"
BASE_PACKAGES=python3,python3-venv,python-is-python3,ca-certificates
REPOSITORY=localhost/ragstream
STORAGE_MB=${STORAGE_MB:-8000}
# The Dockerfile's default base (python:3.11-slim-bookworm): its Python and Debian release.
DEFAULT_BASE=$(sed -n 's/^ARG PYTHON_IMAGE=//p' Dockerfile)
PYTHON=$(sed -n 's/^python:\([0-9.]*\)-.*/\1/p' <<<"$DEFAULT_BASE")
SUITE=${DEFAULT_BASE##*-}

say() { echo "image.sh: $*" >&2; }

bah() { buildah --root "$cache/storage" --runroot "$cache/run" --storage-driver overlay "$@"; }

install_tools() {
  local missing=()
  command -v buildah >/dev/null || missing+=(buildah)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    say "${missing[*]} missing; install with: sudo apt-get install -y ${missing[*]}"
    return 1
  fi
  say "installing Debian's ${missing[*]} (first use only)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# The first mirror this machine's apt sources give for the suite (deb822 files, then
# sources.list); DEBIAN_MIRROR overrides it.
debian_mirror() {
  local suite=$1 found
  if [ -n "${DEBIAN_MIRROR:-}" ]; then
    echo "$DEBIAN_MIRROR"
    return
  fi
  found=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v suite="$suite" '
    /^[[:space:]]*$/ { if (deb && uri && match(" " suites " ", " " suite " ")) { print uri; exit }
                       deb = 0; uri = ""; suites = ""; next }
    /^Types:/ { deb = ($0 ~ /[[:space:]]deb([[:space:]]|$)/) }
    /^URIs:/ { uri = $2 }
    /^Suites:/ { suites = $0; sub(/^Suites:[[:space:]]*/, "", suites) }
    END { if (deb && uri && match(" " suites " ", " " suite " ")) print uri }' | head -n1)
  if [ -z "$found" ] && [ -f /etc/apt/sources.list ]; then
    found=$(awk -v suite="$suite" '$1 == "deb" { sub(/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?/, "")
      if ($2 == suite) { print $1; exit } }' /etc/apt/sources.list)
  fi
  if [ -z "$found" ]; then
    say "no Debian mirror for $suite in the apt sources; set DEBIAN_MIRROR"
    return 1
  fi
  echo "$found"
}

# python:3.11-slim-bookworm -> localhost/ragstream-python:3.11-bookworm-<recipe hash>
base_name() {
  echo "localhost/ragstream-python:$PYTHON-$SUITE-$(sha256sum <<<"$SUITE $BASE_PACKAGES" | cut -c1-12)"
}

make_base() {
  local name=$1 mirror rootfs container
  bah inspect --type image "$name" >/dev/null 2>&1 && return 0
  mirror=$(debian_mirror "$SUITE")
  say "making the base $name from Debian $SUITE packages (first use only)"
  rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
  debootstrap --variant=minbase --include="$BASE_PACKAGES" "$SUITE" "$rootfs" "$mirror" >&2
  # The packages' archives and lists, and this machine's name and resolver, stay out of it.
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
    "$rootfs/etc/hostname" "$rootfs/etc/resolv.conf"
  if ! chroot "$rootfs" python --version | grep -q "^Python $PYTHON\."; then
    say "Debian $SUITE's python is $(chroot "$rootfs" python --version), not $PYTHON as $DEFAULT_BASE"
    return 1
  fi
  container=$(bah from scratch)
  tar -C "$rootfs" -cf - . | tar -C "$(bah mount "$container")" -xf -
  bah umount "$container" >/dev/null
  bah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env LANG=C.UTF-8 --cmd python3 "$container"
  bah commit -q "$container" "$name" >/dev/null
  bah rm "$container" >/dev/null
  rm -rf "$rootfs"
}

# The files .dockerignore lets into the build context (an allowlist: `*`, then `!path`
# lines; the other lines exclude paths or `**/` names below them).
context_files() {
  local include=() prune=(-false) line
  while read -r line; do
    case "$line" in
      '' | '#'* | '*') ;;
      '!'*) include+=("${line#!}") ;;
      '**/'*) line=${line#\*\*/}; prune+=(-o -name "${line%/}") ;;
      *) prune+=(-o -path "${line%/}") ;;
    esac
  done <.dockerignore
  find "${include[@]%/}" \( "${prune[@]}" \) -prune -o -type f -print | LC_ALL=C sort
}

image_name() {
  local base=$1 digest
  digest=$({ echo "$base"; cat Dockerfile; context_files | xargs -d '\n' sha256sum; } |
    sha256sum | cut -c1-16)
  echo "$REPOSITORY:$digest"
}

# The host's pip settings that let pip reach the package index from here (an index or proxy
# of its own, its CA bundle), as one pip.conf mounted into the build's RUN steps with the
# files it names; they stay out of the image. Environment variables win over files, as in pip.
pip_volumes() {
  local conf="$cache/pip.conf" listed line key value
  local -A settings=()
  listed=$(python3 -m pip config list 2>/dev/null || true)
  while IFS= read -r line; do
    key=${line#*.}
    key=${key%%=*}
    value=${line#*=\'}
    settings[$key]=${value%\'}
  done < <(grep -v '^:env:' <<<"$listed"; grep '^:env:' <<<"$listed")
  echo "[global]" >"$conf"
  for key in index-url extra-index-url trusted-host proxy timeout default-timeout retries \
    cert client-cert; do
    value=${settings[$key]:-}
    [ -n "$value" ] || continue
    echo "$key = $value" >>"$conf"
    if [[ $key == *cert && -f $value ]]; then
      echo "--volume=$value:$value:ro"
    fi
  done
  echo "--volume=$conf:/etc/pip.conf:ro"
}

clean() {
  [ -d "$cache/storage" ] || return 0
  bah rm --all >/dev/null
  # buildah keeps its overlay folder mounted on itself; unmounted, .cache can be removed.
  umount "$cache/storage/overlay" 2>/dev/null || true
}

# Each tree's image adds about 1 GB (its venv layer and the layer cache); past STORAGE_MB
# the older images and the cache go, and the next build starts again from the base.
prune() {
  local keep=$1 old
  [ "$(du -sm "$cache/storage" | cut -f1)" -gt "$STORAGE_MB" ] || return 0
  old=$(bah images --format '{{.Name}}:{{.Tag}}' --filter "reference=$REPOSITORY" | grep -vxF "$keep" || true)
  say "the storage holds over $STORAGE_MB MB: removing the older images and the layer cache"
  [ -z "$old" ] || bah rmi $old >/dev/null
  bah rmi --prune >/dev/null
}

build() {
  local base name volumes
  install_tools
  mkdir -p "$cache"
  # One build at a time: parallel runs wait for the first one instead of racing it.
  exec 9>"$cache/build.lock"
  flock 9
  base=$(base_name)
  make_base "$base"
  name=$(image_name "$base")
  if bah inspect --type image "$name" >/dev/null 2>&1; then
    say "$name is built (the tree is unchanged)"
  else
    say "building $name (log: $cache/build.log)"
    mapfile -t volumes < <(pip_volumes)
    # --layers: a tree whose dependencies are unchanged reuses their layers.
    if ! bah bud --isolation chroot --layers --pull=never --build-arg "PYTHON_IMAGE=$base" \
      "${volumes[@]}" --tag "$name" --file Dockerfile . >"$cache/build.log" 2>&1; then
      tail -n 40 "$cache/build.log" >&2
      say "the build failed; its whole log is $cache/build.log"
      return 1
    fi
    prune "$name"
    info >&2
  fi
  echo "$name"
}

info() {
  local name
  name=$(image_name "$(base_name)")
  bah images --format '{{.Name}}:{{.Tag}} {{.Size}}' "$name"
  echo "$(bah inspect --type image --format '{{len .OCIv1.RootFS.DiffIDs}}' "$name") layers"
}

case "${1:-build}" in
  build) build ;;
  name) image_name "$(base_name)" ;;
  info) info ;;
  clean) clean ;;
  buildah) shift; bah "$@" ;;
  *) echo "usage: image.sh build|name|info|clean|buildah ARGS" >&2; exit 2 ;;
esac
