#!/usr/bin/env bash
# Prepare a fresh Debian/Ubuntu machine (root) to run the demo and the tests: the Docker engine and
# debootstrap from the distribution, dockerd started when none runs. Idempotent; says what it did.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v shellcheck >/dev/null 2>&1 || missing+=(shellcheck)
command -v git >/dev/null 2>&1 || missing+=(git)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
if ((${#missing[@]})); then
  echo "installing ${missing[*]} ..."
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "docker.io, debootstrap, make, git, shellcheck: present"
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
