#!/usr/bin/env bash
# Build the execution environment of ee/execution-environment.yml (`make ee`) as the image gpuops-ee:latest.
# Stages build/ee/ first, so that the build needs neither Galaxy nor PyPI from inside the build containers:
#   collections/   the collection's tarball (make build) and the collections it depends on (galaxy.yml), copied from the
#                  `ansible` package of .venv, which bundles them (with community.docker's own dependency);
#   requirements.yml  ansible-galaxy's list of those, as paths inside the build;
#   wheels/        a wheelhouse for the EE's Python (Debian 12: CPython 3.11): the pins of ee/execution-environment.yml,
#                  the collection's meta/ee-requirements.txt and ansible-builder's own bindep, pyyaml, packaging and
#                  dumb-init (the EE's init).
# Then `ansible-builder build` (Docker) and `ansible-builder introspect --sanitize` of the collections as installed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bin=.venv/bin
stage=build/ee
version=$($bin/python -c 'import yaml; print(yaml.safe_load(open("galaxy.yml"))["version"])')
tarball=build/gpuops-gpu_server-$version.tar.gz
[[ -f $tarball ]] || { echo "ee: $tarball is missing: make build first" >&2; exit 1; }
site=$($bin/python -c 'import ansible_collections, os; print(os.path.dirname(ansible_collections.__path__[0]))')

rm -rf "$stage/collections" "$stage/context" && mkdir -p "$stage/collections" "$stage/wheels"
cp "$tarball" "$stage/collections/gpuops-gpu_server.tar.gz"
# The dependencies galaxy.yml names, and theirs, from the bundle (installed collections: MANIFEST.json, no galaxy.yml).
mapfile -t deps < <($bin/python - "$site" <<'PY'
import json
import os
import sys

import yaml

site = sys.argv[1]
todo = list(yaml.safe_load(open('galaxy.yml'))['dependencies'])
seen = []
while todo:
    name = todo.pop(0)
    if name in seen:
        continue
    seen.append(name)
    path = os.path.join(site, 'ansible_collections', *name.split('.'))
    with open(os.path.join(path, 'MANIFEST.json')) as f:
        todo.extend(json.load(f)['collection_info']['dependencies'] or {})
print('\n'.join(seen))
PY
)
{
  echo "---"
  echo "# Written by scripts/ee.sh: the collection and its dependencies, staged under build/ee/collections."
  echo "collections:"
  echo "  - {name: /build/collections/gpuops-gpu_server.tar.gz, type: file}"
  for name in "${deps[@]}"; do
    ns=${name%%.*} coll=${name#*.}
    mkdir -p "$stage/collections/$ns"
    cp -a "$site/ansible_collections/$ns/$coll" "$stage/collections/$ns/$coll"
    echo "  - {name: /build/collections/$ns/$coll, type: dir}"
  done
} > "$stage/requirements.yml"

# The wheelhouse, downloaded once per set of pins (a stamp names them).
pins=(ansible-core==2.19.14 ansible-runner==2.4.3 'requests>=2.25' bindep pyyaml packaging dumb-init==1.2.5)
mapfile -t -O "${#pins[@]}" pins < <(grep -vE '^\s*(#|$)' meta/ee-requirements.txt)
stamp="$stage/wheels/.complete-$(printf '%s\n' "${pins[@]}" | sha256sum | cut -c1-16)"
if [[ ! -e $stamp ]]; then
  find "$stage/wheels" -mindepth 1 -delete
  $bin/pip download --quiet --disable-pip-version-check --only-binary=:all: --python-version 3.11 \
    --implementation cp --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux_2_28_x86_64 --dest "$stage/wheels" "${pins[@]}"
  touch "$stamp"
fi

start=$SECONDS
$bin/ansible-builder build --file ee/execution-environment.yml --context "$stage/context" \
  --container-runtime docker --tag gpuops-ee:latest --tag "gpuops-ee:$version" --verbosity 2
echo "ee: built gpuops-ee:$version in $((SECONDS - start)) s, $(docker image inspect -f '{{.Size}}' gpuops-ee:latest | awk '{printf "%d MB", $1 / 1e6}')"
# What ansible-builder reads from the collections installed in the image (the collection's own meta files among them),
# sanitized as a build would use it: copied out of the image and read by the host's ansible-builder.
rm -rf "$stage/installed" && mkdir -p "$stage/installed"
cid=$(docker create gpuops-ee:latest)
trap 'docker rm -f "$cid" >/dev/null' EXIT
docker cp "$cid:/usr/share/ansible/collections/ansible_collections" "$stage/installed/"
$bin/ansible-builder introspect --sanitize "$stage/installed" | tee "$stage/introspect.txt"
