#!/usr/bin/env bash
# Run site.yml from the execution environment (gpuops-ee:latest, `make ee`) against the demo container (`make demo`)
# twice, as a user and as AWX/AAP would, and check that the second run changes nothing (`make ee-demo`):
#   1. ansible-navigator run --mode stdout --pull-policy never: the playbook from the collection installed in the EE,
#      the EE's own ansible.cfg (the project directory build/ee-demo/navigator has none, and none of this checkout's);
#   2. ansible-runner with process isolation in the same image (the engine AWX runs), its private data directory
#      build/ee-demo/runner.
# The EE reaches the demo container through the mounted Docker socket with community.docker's docker_api connection
# (the EE has no docker CLI, which the demo inventory's community.docker.docker connection calls).
# The collection keeps two things on the control node, under ~/.gpuops: the CA (roles/pki, gpuops_pki_ca_dir) and the
# monitoring endpoints' generated password (gpu_monitoring_web_password_file). An EE's file system lasts one job, so the
# demo's ~/.gpuops is mounted into the EE and both variables point there, as a job in AWX needs them on a persistent
# path (docs/awx.md); without it each run would make a new CA and password and re-issue every certificate.
# Artifacts (navigator's playbook artifact, runner's job events and stdout) are kept under build/ee-demo.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bin=$root/.venv/bin
image=${EE_IMAGE:-gpuops-ee:latest}
demo=${DEMO_NAME:-gpuops-demo}
platform=${PLATFORM:-debian12}
out=build/ee-demo

# ansible-navigator hands the caller's ANSIBLE_* variables to the EE: the Makefile's ANSIBLE_COLLECTIONS_PATH (this
# checkout) would hide the EE's own collections, and the run could not find the collection's playbook.
while read -r name; do unset "$name"; done < <(compgen -e | grep '^ANSIBLE_' || true)
docker image inspect "$image" >/dev/null 2>&1 || { echo "ee-demo: no image $image: make ee first" >&2; exit 1; }
[[ $(docker inspect -f '{{.State.Running}}' "$demo" 2>/dev/null) == true ]] \
  || { echo "ee-demo: the demo container $demo is not running: make demo first" >&2; exit 1; }

rm -rf "$out" && mkdir -p "$out/navigator/inventory" "$out/runner/inventory" "$out/runner/project" "$out/runner/env"
state=${GPUOPS_STATE_DIR:-$HOME/.gpuops}
[[ -d $state/pki ]] || { echo "ee-demo: no CA directory $state/pki (make demo makes it)" >&2; exit 1; }
state_vars="-e gpuops_pki_ca_dir=/gpuops/pki -e gpu_monitoring_web_password_file=/gpuops/gpu_monitoring/web-password"
read -r -a extra <<< "$state_vars"
# The demo inventory with its connection swapped (an inventory variable, not an extra var: an extra var would also
# take over the tasks delegated to localhost, which run in the EE itself).
for dir in "$out/navigator/inventory" "$out/runner/inventory"; do
  cp -r inventories/demo/. "$dir/"
  sed -i 's/^ansible_connection: community\.docker\.docker$/ansible_connection: community.docker.docker_api/' "$dir/group_vars/all.yml"
  grep -q '^ansible_connection: community.docker.docker_api$' "$dir/group_vars/all.yml" \
    || { echo "ee-demo: inventories/demo/group_vars/all.yml has no community.docker.docker connection to swap" >&2; exit 1; }
done
if [[ -f inventories/demo-platforms/$platform.yml ]]; then
  cp "inventories/demo-platforms/$platform.yml" "$out/navigator/platform.yml"
  cp "inventories/demo-platforms/$platform.yml" "$out/runner/env/platform.yml"
  extra+=(-e @platform.yml)
fi
# The playbook of the collection installed in the EE, by its name (not this checkout's site.yml).
printf '%s\n' '---' '- name: The collection'"'"'s site.yml, from the execution environment' \
  '  ansible.builtin.import_playbook: gpuops.gpu_server.site' > "$out/runner/project/site.yml"

changed() {  # changed= of the PLAY RECAP line of $1 for the demo host (colours taken out)
  sed 's/\x1b\[[0-9;]*m//g' "$1" | sed -n "s/^$demo *: .*changed=\([0-9]*\).*/\1/p" | tail -1
}

echo "== 1/2 ansible-navigator (stdout mode, pull policy never, the EE's ansible.cfg)"
start=$SECONDS
(cd "$out/navigator" && "$bin/ansible-navigator" run gpuops.gpu_server.site -i inventory "${extra[@]}" \
  --mode stdout --pull-policy never --execution-environment true --execution-environment-image "$image" \
  --container-engine docker \
  --execution-environment-volume-mounts /var/run/docker.sock:/var/run/docker.sock "$state:/gpuops" \
  --container-options=--user=0 --log-file navigator.log \
  --playbook-artifact-save-as 'artifact-{time_stamp}.json') 2>&1 | tee "$out/navigator.out"
first=$(changed "$out/navigator.out")
echo "ee-demo: ansible-navigator run: $((SECONDS - start)) s, changed=$first"

echo "== 2/2 ansible-runner, process isolation (docker), as AWX runs a job"
cmdline=$state_vars
[[ -f $out/runner/env/platform.yml ]] && cmdline+=" -e @/runner/env/platform.yml"
start=$SECONDS
"$bin/ansible-runner" run "$out/runner" -p site.yml --cmdline "$cmdline" \
  --process-isolation --process-isolation-executable docker --container-image "$image" \
  --container-volume-mount /var/run/docker.sock:/var/run/docker.sock --container-volume-mount "$state:/gpuops" \
  --container-option=--user=0 \
  2>&1 | tee "$out/runner.out"
second=$(changed "$out/runner.out")
echo "ee-demo: ansible-runner run: $((SECONDS - start)) s, changed=$second"
[[ -n $first && -n $second ]] || { echo "ee-demo: a run has no PLAY RECAP for $demo" >&2; exit 1; }
[[ $second == 0 ]] || { echo "ee-demo: the second run changed $second task(s): not idempotent" >&2; exit 1; }
echo "ee-demo: passed (navigator changed=$first, runner changed=$second); artifacts under $out"
