"""Print the Molecule runs of `make molecule`: `site` on every platform, then the role scenarios on Debian 12.

`site` (site.yml with the demo's inventory on one host) runs on each platform, printed as `site@platform`
(scripts/molecule-all.sh starts it with that platform's image, tests/images/build.sh PLATFORM builds it); its
verifier reuses the role scenarios' tests that hold on any host. The role scenarios (refusals, lockout guard,
collectors, exporters, fixture repositories, several hosts) run on Debian 12, printed as their bare names.
All runs go the longest first (their times in a clean-clone CI run, SECONDS; two site runs may run side by side, as
their names carry the platform), so that the two slots of scripts/molecule-all.sh end together instead of one waiting
on a long run started last. The scenarios in a booted guest (VM_SCENARIOS: storage) are `make test-vm`, not `make test`.
"""
import os
import sys

# Seconds each run took in a clean-clone CI run (2 at a time on 2 cores; which runs, in docs/benchmarks.md "Figures
# behind code comments"); a scenario not listed counts as long (it runs early).
SECONDS = {"site@debian12": 1252, "site@debian13": 690, "site@ubuntu2404": 866, "site@ubuntu2204": 797,
           "site@ubuntu2604": 796, "storage": 1079, "backup": 276, "pki": 138,
           "fleet_upgrade": 590, "hardening": 260, "spot": 236, "gpu_monitoring": 199, "jupyter": 325,
           "gpu_monitoring_exporters": 154, "nvidia_driver_cuda_repo": 140, "base": 211, "nvidia_container_toolkit": 110,
           "nvidia_driver_cuda_repo_590": 299, "cuda_toolkit_cuda_repo": 89, "docker_ce": 90, "log_management": 109,
           "vendor_repo": 69, "nvidia_driver_refuse": 99, "nvidia_driver_kernels": 1958, "hardening_ssh_release": 249,
           "gpu_plugins": 89, "docker": 77, "hardening_lockout": 62,
           "training_cluster": 335, "slurm": 493}
UNKNOWN_SECONDS = 400
DEFAULT_PLATFORM = "debian12"
PLATFORMS = ["debian12", "debian13", "ubuntu2204", "ubuntu2404", "ubuntu2604"]
SITE = "site"
# Role scenarios whose converge and tests the site run on Debian 12 repeats exactly (the same role defaults, the
# same platform, test_site.py imports their tests): CI runs them there only once, in site@debian12. They stay
# runnable by name (make molecule SCENARIOS=nvidia_driver) for work on one role.
# gpu_plugins: the real Debian nvidia-smi without a GPU; site@debian12 installs it through the driver role and imports
# the same checks (molecule/nvidia_driver/tests: nvidia-smi fails on NVML, gpu_facts and gpu_health say so).
# jupyter: site@debian13 logs in with a password (molecule/site/converge.yml), the token platforms check the login page
# without "Setup a Password"; the scenario's own converge-time port checks, its negative control (Jupyter's defaults)
# and its token rotation in a browser (three more converges) run only by name (make molecule SCENARIOS=jupyter).
# base: the site's prepare imports base's (a dpkg lock holder, a cloud-init first boot) and its verifier every base test.
COVERED_BY_SITE = ["nvidia_driver", "cuda_toolkit", "gpu_plugins", "jupyter", "base"]
# Scenarios in a booted QEMU guest (TCG, a core of their own for half an hour or more): the heavier tier, `make test-vm`,
# not `make test`: storage's VM alone put .ci/run past its 60 minutes (docs/benchmarks.md, Test tiers).
VM_SCENARIOS = ["storage"]
# nvidia_driver_kernels (real distribution kernels: kernel packages, DKMS builds, initramfs images) is one of the role
# scenarios of `make test`; its kernels are chosen so that as few as possible need a DKMS build, which is most of its
# time (its run times: docs/benchmarks.md).
# Role scenarios that `make test` has no room for in CI's 90 minutes (docs/benchmarks.md): `make test-extended`. These
# run on several hosts or beside fixture services (moto's S3, a metadata stand-in, NVIDIA's repository stood in for by
# fixture packages); what each proves is untouched by the site runs but for the same roles' defaults, which site covers
# on every platform.
# training_cluster (three containers, an Open MPI allreduce through the hardened firewall) came after that run: CI's time
# was already at its limit.
# slurm (three hardened containers: slurmctld, two slurmd, jobs through the firewall; a fourth that bakes the CLOUD nodes'
# image, whose containers the controller starts and ends) came after that too.
# Five role scenarios moved here when CI passed its 60 minutes (docs/benchmarks.md, Test tiers), each with a path that
# other runs of `make test` exercise too: vendor_repo (every repository scenario calls it; its key refusals
# are unit-tested against apt itself), pki (the site runs issue JupyterLab's and Prometheus's certificates through it),
# docker (the site runs install and configure Docker; daemon.json's merge is unit-tested), cuda_toolkit_cuda_repo and
# nvidia_driver_cuda_repo (nvidia_driver_cuda_repo_590 keeps NVIDIA's repository path, its signed fixture and a
# branch change in CI).
EXTENDED_SCENARIOS = ["fleet_upgrade", "backup", "spot", "hardening_ssh_release", "gpu_monitoring_exporters", "docker_ce",
                      "training_cluster", "slurm", "vendor_repo", "pki", "docker", "cuda_toolkit_cuda_repo",
                      "nvidia_driver_cuda_repo"]
# The AMD roles' scenarios (issue 55), on the platforms whose archives carry what each needs: `make test-extended`, as
# CI's 60 minutes were already spent. amd_driver and rocm on Debian 13, Ubuntu 24.04 and 26.04 (fake PCI buses, the
# archives' real packages); amd_driver_refuse on Debian 12's real kernels; the AMD-repository paths against signed
# fixture repositories (amd_driver_amd_repo on Debian 12, rocm_amd_repo on Ubuntu 24.04 and 26.04); site_vendors, one
# inventory with a fake NVIDIA host and a fake AMD host through site.yml, on Debian 13.
AMD_RUNS = ["site_vendors@debian13", "amd_driver@debian13", "amd_driver@ubuntu2404", "amd_driver@ubuntu2604", "amd_driver_refuse",
            "amd_driver_amd_repo", "rocm@debian13", "rocm@ubuntu2404", "rocm@ubuntu2604", "rocm_amd_repo@ubuntu2404",
            "rocm_amd_repo@ubuntu2604"]
# Runs whose first converge goes under plain Ansible (every task through `docker exec` and ansible-core's own strategy,
# as our users run the collection): the hardening role's two scenarios, whose tasks are the ones that lean on the
# connection itself (`script` for the SSH rollback guard, `meta: reset_connection`, `wait_for_connection`, become).
# Everything else goes under Mitogen (scripts/mitogen/ansible-playbook: one Python interpreter per container instead of
# a `docker exec` per task), these runs' check and idempotence passes included: what those passes assert (nothing
# changes, --check goes through) is the modules' own logic, which the connection does not touch. site@debian12 converges
# under Mitogen too: on plain Ansible its first converge took more than twice as long (docs/benchmarks.md); `make demo`
# and benchmarks/rerun_floor.sh run site.yml on plain Ansible.
PLAIN_RUNS = ["hardening@debian12", "hardening_lockout@debian12"]

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "molecule")
present = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "molecule.yml")))


def rank(name):
    """Longest first; ties by name."""
    return (-SECONDS.get(name, UNKNOWN_SECONDS), name)


def runs(platforms):
    """site@platform for each platform and, when Debian 12 is among the platforms, the role scenarios: the longest
    first."""
    out = ["%s@%s" % (SITE, p) for p in platforms]
    if DEFAULT_PLATFORM in platforms:
        out += [name for name in present if name != SITE and name not in COVERED_BY_SITE and name not in VM_SCENARIOS
                and name not in EXTENDED_SCENARIOS and name not in {r.partition("@")[0] for r in AMD_RUNS}]
    return sorted(out, key=rank)


def run_timeout(run):
    """Seconds RUN may take before scripts/molecule-all.sh kills it and tries once more: three times its time in a CI
    run (SECONDS comes from a quiet machine; a busy one took up to 1.4 times as long), at least 900 (an apt index
    refresh has hung twice in fleet_upgrade, with every process asleep in poll)."""
    return max(900, 3 * SECONDS.get(run, SECONDS.get(run.partition("@")[0], UNKNOWN_SECONDS)))


def mitogen(run):
    """Whether RUN goes under Mitogen from its first converge on: every run but PLAIN_RUNS (a bare scenario name is its
    Debian 12 run)."""
    return (run if "@" in run else "%s@%s" % (run, DEFAULT_PLATFORM)) not in PLAIN_RUNS


if __name__ == "__main__":
    if sys.argv[1:2] == ["--mitogen"]:
        print("yes" if mitogen(sys.argv[2]) else "")
        sys.exit(0)
    if sys.argv[1:2] == ["--timeout"]:
        print(run_timeout(sys.argv[2]))
        sys.exit(0)
    if sys.argv[1:2] == ["--extended"]:
        print(" ".join(sorted(EXTENDED_SCENARIOS + AMD_RUNS, key=rank)))
        sys.exit(0)
    if sys.argv[1:2] == ["--vm"]:
        print(" ".join(VM_SCENARIOS))
        sys.exit(0)
    wanted = sys.argv[1:] or PLATFORMS
    unknown = sorted(set(wanted) - set(PLATFORMS))
    if unknown:
        sys.exit("unknown platform(s) %s: choose from %s" % (", ".join(unknown), ", ".join(PLATFORMS)))
    print(" ".join(runs([p for p in PLATFORMS if p in wanted])))
