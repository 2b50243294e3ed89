#!/usr/bin/env bash
# Installs the Debian packages twinbench builds with. Idempotent; silent when nothing is missing.
set -euo pipefail
packages=(
  g++ cmake ninja-build pkg-config
  libboost-dev                      # Asio, Beast (header-only)
  libprotobuf-dev protobuf-compiler # scenario and result schemas
  libgtest-dev libgmock-dev         # tests
  libcli11-dev libfmt-dev           # command line, formatting
  libssl-dev                        # TLS (OpenSSL)
  libns3-dev ns3 libgsl-dev         # simulated backend (ns-3.37)
  libjemalloc-dev                   # allocator of the simulating processes
  gnuplot-nox                       # plots
  parallel                          # sweep shards in the tests (GNU parallel)
  iproute2                          # the emulated path configures its namespaces with ip
  clang-14 libfuzzer-14-dev         # fuzz targets (the `fuzz` preset, scripts/fuzz.sh)
  godot3-server                     # the real engine as a reference client (scripts/godot-reference.sh)
  wrk                               # serve under load (scripts/server-load.sh, reliability.sh)
  libxml2-utils                     # xmllint: the JUnit reports checked against their schema (tests)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
