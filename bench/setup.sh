#!/bin/bash
# Installs what the benchmarks need on a fresh Debian machine, compiles the
# C floors into bench/bin/ and builds flow in release mode into
# .build-release/ (apart from the debug .build/). Safe to run again: each
# step is skipped when already done.
#
#   bash bench/setup.sh              # everything
#   bash bench/setup.sh --no-flow    # skip the (slow) release build of flow
#
# A failed flow build is reported but does not fail the script: run.py then
# shows every flow variant as n/a and still measures the floors and peers.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
build_flow=1
for arg in "$@"; do
    case "$arg" in
        --no-flow) build_flow=0 ;;
        *) echo "usage: bash bench/setup.sh [--no-flow]" >&2; exit 2 ;;
    esac
done
[ "${BENCH_SKIP_FLOW_BUILD:-}" = 1 ] && build_flow=0

say() { printf '\n== %s\n' "$*"; }

# 1. Debian packages: GNU make and GNU time (peak RSS), libyaml for the
#    parse floor and for flow itself, a C compiler, pkg-config for SwiftPM.
APT_PKGS=(make time libyaml-dev pkg-config gcc libc6-dev python3)
missing=()
for p in "${APT_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "apt-get install ${missing[*]}"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"
else
    say "Debian packages present: ${APT_PKGS[*]}"
fi

# 2. Peers from PyPI: go-task (go-task-bin) and just (rust-just) ship their
#    native binaries in the wheel.
PY=python3
if ! $PY -m pip --version >/dev/null 2>&1; then
    say "apt-get install python3-pip"
    apt-get install -y python3-pip
fi
PIP_PKGS=(go-task-bin rust-just)
if $PY -m pip show "${PIP_PKGS[@]}" >/dev/null 2>&1; then
    say "PyPI packages present: ${PIP_PKGS[*]}"
else
    say "pip install ${PIP_PKGS[*]}"
    # Debian's own python refuses system-wide installs unless told otherwise.
    $PY -m pip install "${PIP_PKGS[@]}" \
        || $PY -m pip install --break-system-packages "${PIP_PKGS[@]}"
    command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
fi

# 3. The C floors.
say "C floors -> bench/bin/"
mkdir -p "$BENCH/bin"
build_c() {  # build_c NAME EXTRA_LIBS...
    local name="$1"; shift
    local src="$BENCH/floor/$name.c" out="$BENCH/bin/$name"
    if [ ! -x "$out" ] || [ "$src" -nt "$out" ]; then
        cc -O2 -Wall -Wextra -o "$out" "$src" "$@"
        echo "built $out"
    else
        echo "up to date: $out"
    fi
}
build_c yaml_tree -lyaml
build_c spawn
build_c supervise
build_c overlap

# 4. flow, release mode, in its own scratch folder, built as the README's install step says:
#    the Swift runtime linked in statically, no $ORIGIN search path, and metadata
#    accessors instead of mangled-name lookups (see README, "A binary to install").
if [ "$build_flow" = 1 ]; then
    release_build=(swift build -c release --static-swift-stdlib --disable-local-rpath --scratch-path .build-release --product flow
        -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors)
    say "${release_build[*]}"
    if (cd "$ROOT" && "${release_build[@]}"); then
        echo "flow: $ROOT/.build-release/release/flow"
    else
        echo "WARNING: the release build of flow failed; run.py will show flow's variants as n/a." >&2
    fi
else
    say "flow release build skipped"
fi

say "ready: python3 bench/run.py"
