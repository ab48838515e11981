#!/usr/bin/env bash
# Install what is missing (Debian 12), configure and build neardup into build/.
# Idempotent: re-running only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")"

pkgs=(build-essential pkg-config meson ninja-build clang libclang-rt-14-dev g++
      librocksdb-dev libzstd-dev libxxhash-dev libcmocka-dev
      libutf8proc-dev libxml2-dev libopencc-dev libjansson-dev libsimdjson-dev libmicrohttpd-dev libcurl4-openssl-dev zlib1g-dev
      libopenmpi-dev openmpi-bin python3 python3-dev python3-pytest python3-venv python3-pip
      python3-mesonpy mypy base-files curl
      valgrind)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

[ -d build ] || meson setup build
ninja -C build
