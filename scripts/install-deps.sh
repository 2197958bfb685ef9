#!/usr/bin/env bash
# Installs the Debian 12 packages Culprit builds and tests with.
# Idempotent: does nothing when every package is already installed.
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  antlr4 libantlr4-runtime-dev          # grammar tool (4.7.2) + C++ runtime (4.9)
  llvm-19-dev                           # LLVM ORC (the JIT evaluator)
  libhyperscan-dev libre2-dev           # one-pass scanning + captures
  libpcre2-dev                          # fast captures where a regex means the same to PCRE2 (runtime/capture_regex.h)
  libmimalloc-dev                       # the culprit executable's malloc (cli/allocator.h)
  libfmt-dev nlohmann-json3-dev doctest-dev
  libsqlite3-dev
  libyaml-cpp-dev libpq-dev zlib1g-dev  # the blueprint: configuration, PostgreSQL store, gzip logs; gzip bodies of the service
  libcurl4-openssl-dev                  # every outbound HTTP call (Loki, PromQL, Kubernetes, the service's clients)
  openssl                               # the Kubernetes test server's CA (tests/blueprint/check_kube.sh)
  prometheus                            # the PromQL collector's real-Prometheus test (tests/blueprint/check_promql.sh)
  slurm-wlm slurmdbd munge mariadb-server bc   # the blueprint's real-Slurm test (tests/blueprint/check_slurm.sh)
  postgresql sqlite3                    # the blueprint's store tests (a real PostgreSQL server)
  haproxy                               # replicas of `culprit serve` behind a load balancer (tests/blueprint/check_balanced_service.sh)
  prometheus-alertmanager               # event-driven discovery from Alertmanager's webhook (tests/blueprint/check_alertmanager.sh)
  clang libclang-rt-14-dev              # the sanitizer build and libFuzzer (scripts/sanitize.sh, scripts/fuzz.sh)
  python3 python3-jsonschema            # verdict schema validation in tests
  wrk curl                              # the service load run (tests/service/check_load.py) and benchmark
  jq                                    # the curl recipes of docs/service.md (tests/service/check_recipes.sh)
  ripgrep time                          # scan benchmark peers (bench/run.sh)
  chromium fonts-dejavu-core            # the dashboard's browser test (tests/dashboard/check_browser.sh)
)
# The Kubernetes tests drive their API server with kubectl: any kubectl on
# PATH will do, else Debian's (kubernetes-client, kubectl 1.20).
command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm drive the browser test; a machine may have them from
# elsewhere (NodeSource's nodejs bundles npm), and Debian's npm would clash.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends "${missing[@]}"
fi

# puppeteer-core (the pinned version in tests/dashboard/package-lock.json)
# drives the system's Chromium; it downloads no browser.
dash="$(cd "$(dirname "$0")/.." && pwd)/tests/dashboard"
if ! cmp -s "$dash/package-lock.json" "$dash/node_modules/.culprit-installed-lock" 2>/dev/null; then
  echo "install-deps: npm ci in tests/dashboard (puppeteer-core)"
  (cd "$dash" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
  cp "$dash/package-lock.json" "$dash/node_modules/.culprit-installed-lock"
fi
