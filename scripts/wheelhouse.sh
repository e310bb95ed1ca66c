#!/usr/bin/env bash
# Download the jupyter role's pinned wheels (roles/jupyter/defaults/main.yml, jupyter_packages) and their
# dependencies for the Python of each PLATFORM into .cache/wheels/PLATFORM, once (a complete wheelhouse is kept).
# The demo and the test containers install JupyterLab from there (jupyter_pip_find_links, jupyter_pip_no_index),
# bind-mounted at /opt/gpuops-wheels: on this machine they do not reach PyPI through the host's proxy, and a host
# that reaches PyPI downloads each wheel once for all its containers. Binary wheels only, for x86_64 glibc.
# GPUOPS_WHEELS_DIR: another root than .cache/wheels.
# Usage: scripts/wheelhouse.sh PLATFORM...   (debian12, debian13, ubuntu2204, ubuntu2404, ubuntu2604)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-$root/.venv/bin/python}"
[[ -x $python ]] || python=python3
declare -A PY=([debian12]=3.11 [debian13]=3.13 [ubuntu2204]=3.10 [ubuntu2404]=3.12 [ubuntu2604]=3.14)
for platform in "$@"; do
  version=${PY[$platform]:-}
  [[ -n $version ]] || { echo "wheelhouse: unknown platform $platform (${!PY[*]})" >&2; exit 2; }
  # The pins as the role renders them on that Python (a pin may depend on ansible_facts.python.version).
  mapfile -t pins < <("$python" - "$root/roles/jupyter/defaults/main.yml" "$version" <<'PY'
import sys
import jinja2
import yaml
with open(sys.argv[1]) as f:
    packages = yaml.safe_load(f)["jupyter_packages"]
major, minor = sys.argv[2].split(".")
facts = {"python": {"version": {"major": int(major), "minor": int(minor)}}}
for name, version in packages.items():
    print("%s==%s" % (name, jinja2.Template(str(version)).render(ansible_facts=facts)))
PY
)
  dest="${GPUOPS_WHEELS_DIR:-$root/.cache/wheels}/$platform"
  # The stamp names the pins and how they were resolved (markers for the target Python, below).
  stamp="$dest/.complete-$( { printf '%s\n' "${pins[@]}"; echo "markers: python $version"; } | sha256sum | cut -c1-16)"
  [[ -e $stamp ]] && continue
  # Emptied in place, never replaced: a container may already have the directory bind-mounted.
  mkdir -p "$dest" && find "$dest" -mindepth 1 -delete
  # pip picks wheels for --python-version but evaluates the dependencies' environment markers for the Python that
  # runs it: run from Python 3.11, a wheelhouse for 3.10 lacked what `python_version < "3.11"` adds (tomli,
  # exceptiongroup ...), so pip on Ubuntu 22.04 could not install JupyterLab offline. pip runs here with its markers
  # evaluated for the target Python (its vendored packaging's default_environment, the one home of that lookup).
  "$python" - "$version" download --quiet --disable-pip-version-check --only-binary=:all: \
    --python-version "$version" --implementation cp \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
    --dest "$dest" "${pins[@]}" <<'PY'
import sys

from pip._vendor.packaging import markers

target = sys.argv[1]
host_environment = markers.default_environment


def target_environment():
    environment = host_environment()
    environment.update(python_version=target, python_full_version=target + ".0")
    return environment


markers.default_environment = target_environment
from pip._internal.cli.main import main  # noqa: E402  (after the patch, which it must see)

sys.exit(main(sys.argv[2:]))
PY
  touch "$stamp"
  echo "wheelhouse: $platform (Python $version): $(find "$dest" -name '*.whl' | wc -l) wheels in $dest"
done
