#!/usr/bin/env bash
# Prepare a fresh Debian/Ubuntu machine (root) to run the demo and the tests, from the distribution:
# the Docker engine, debootstrap (test image), make, git, shellcheck (sanity), promtool (alert rule tests),
# apt-cacher-ng (package cache for the test containers), chromium and chromium-driver (the browser tests),
# qemu-system-x86, qemu-utils and an SSH client (the VM of the storage scenario, tests/vm); dockerd and the cache started
# when not running.
# Idempotent; says what it did.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v shellcheck >/dev/null 2>&1 || missing+=(shellcheck)
[[ -x /usr/sbin/apt-cacher-ng ]] || missing+=(apt-cacher-ng)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v git >/dev/null 2>&1 || missing+=(git)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v qemu-system-x86_64 >/dev/null 2>&1 || missing+=(qemu-system-x86)
command -v qemu-img >/dev/null 2>&1 || missing+=(qemu-utils)
command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
if ((${#missing[@]})); then
  echo "installing ${missing[*]} ..."
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "docker.io, debootstrap, make, git, shellcheck, apt-cacher-ng, promtool, chromium, chromium-driver, qemu, ssh: present"
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
