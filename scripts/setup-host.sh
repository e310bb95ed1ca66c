#!/usr/bin/env bash
# Prepare a fresh Debian/Ubuntu machine (root) from the distribution, for the demo or for the tests:
#   scripts/setup-host.sh demo   what `make demo` needs: the Docker engine, mmdebstrap (its image), make, git, an SSH
#                                client (the demo admin's key pair; the hardening role's lockout guard logs in with it)
#                                and python3-venv; dockerd started when not running.
#   scripts/setup-host.sh [test] all that, and what `make test` needs besides: shellcheck (sanity), promtool (alert rule
#                                tests), apt-cacher-ng (package cache for the test containers, started when not running),
#                                chromium and chromium-driver (the browser tests), qemu-system-x86 and qemu-utils (the
#                                VM of the storage scenario, tests/vm).
# Idempotent; says what it did.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
mode=${1:-test}
[[ $mode == demo || $mode == test ]] || { echo "usage: scripts/setup-host.sh [demo|test]" >&2; exit 2; }

missing=()
want=()
need() {  # need COMMAND PACKAGE: install PACKAGE when COMMAND is missing
  want+=("$2")
  command -v "$1" >/dev/null 2>&1 || missing+=("$2")
}
need dockerd docker.io
need mmdebstrap mmdebstrap
need make make
need git git
need ssh openssh-client
want+=(python3-venv)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
if [[ $mode == test ]]; then
  need shellcheck shellcheck
  want+=(apt-cacher-ng)
  [[ -x /usr/sbin/apt-cacher-ng ]] || missing+=(apt-cacher-ng)
  need promtool prometheus
  need curl curl
  need chromium chromium
  need chromedriver chromium-driver
  need qemu-system-x86_64 qemu-system-x86
  need qemu-img qemu-utils
fi
if ((${#missing[@]})); then
  echo "installing ${missing[*]} ..."
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "${want[*]}: present"
fi

if docker info >/dev/null 2>&1; then
  echo "dockerd: running"
else
  echo "starting dockerd ..."
  setsid dockerd >/var/log/dockerd.log 2>&1 < /dev/null &
  if ! timeout 60 sh -c 'until docker info >/dev/null 2>&1; do sleep 1; done'; then
    echo "dockerd did not start within 60 s; last lines of /var/log/dockerd.log:" >&2
    tail -n 20 /var/log/dockerd.log >&2
    exit 1
  fi
  echo "dockerd: started"
fi

[[ $mode == test ]] || exit 0

# The package cache for the test containers: our own apt-cacher-ng instance on port 3149 with
# tests/apt-cache/acng.conf (the distribution's service, if any, keeps its own port and config).
here=$(cd "$(dirname "$0")/.." && pwd)
if (exec 3<>/dev/tcp/127.0.0.1/3149) 2>/dev/null; then
  echo "apt-cacher-ng (test package cache): running on port 3149"
else
  mkdir -p /var/cache/gpuops-apt-cacher-ng /var/log/gpuops-apt-cacher-ng
  chown apt-cacher-ng /var/cache/gpuops-apt-cacher-ng /var/log/gpuops-apt-cacher-ng 2>/dev/null || true
  setsid /usr/sbin/apt-cacher-ng -c "$here/tests/apt-cache" ForeGround=1 \
    >/var/log/gpuops-apt-cacher-ng/stdout.log 2>&1 < /dev/null &
  if timeout 20 bash -c 'until (exec 3<>/dev/tcp/127.0.0.1/3149) 2>/dev/null; do sleep 0.5; done'; then
    echo "apt-cacher-ng (test package cache): started on port 3149"
  else
    echo "apt-cacher-ng did not start; test containers will download straight from the mirror" >&2
  fi
fi
