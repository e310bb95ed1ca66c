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

# Seconds each run took in the clean-clone CI run of 03aee0e on 2026-12-02 (2 at a time on 2 cores); a scenario not
# listed counts as long (it runs early). Scenarios that CI covers by site@debian12 keep their last measured time.
# nvidia_driver_kernels (real kernels, two DKMS builds) and fleet_upgrade (with its kernel mode) were measured on
# 2026-12-03 beside other scenarios: 1,142 s and 252 + 94 s.
# site@ubuntu2604: not yet in a CI run; create, prepare, converge (991 s) and verify as measured on 2026-12-04 beside
# two other Molecule runs (a busy machine: expect less in CI).
SECONDS = {"site@debian12": 818, "site@debian13": 530, "site@ubuntu2404": 521, "site@ubuntu2204": 521, "site@ubuntu2604": 1130,
           "storage": 1079, "backup": 234, "pki": 139,
           "fleet_upgrade": 346, "hardening": 321, "spot": 161, "gpu_monitoring": 221, "jupyter": 325,
           "gpu_monitoring_exporters": 154, "nvidia_driver_cuda_repo": 127, "base": 211, "nvidia_container_toolkit": 100,
           "cuda_toolkit_cuda_repo": 90, "docker_ce": 90, "log_management": 98, "vendor_repo": 56,
           "nvidia_driver_refuse": 70, "nvidia_driver_kernels": 1142, "hardening_ssh_release": 250, "gpu_plugins": 89, "docker": 53, "hardening_lockout": 38}
UNKNOWN_SECONDS = 400
# The platforms whose site run includes the check pass (site.yml --check on the fresh container): Debian 12 only. Every
# role scenario has its own check pass on Debian 12. The others skip it to keep CI within its time (about 130-160 s of
# a run each; the CI run of b5d0ca2 ran past its 90 minutes).
SITE_CHECK_PLATFORMS = ["debian12"]
# The platforms whose site run includes the idempotence pass (the whole site.yml again, 0 changed): Debian 12. The
# others converge and verify (about 270-350 s of a run each saved); every role scenario has its own idempotence pass
# on Debian 12. Ubuntu 24.04's re-run passed in every CI run up to b5d0ca2 (2026-12-01).
SITE_IDEMPOTENCE_PLATFORMS = ["debian12"]
DEFAULT_PLATFORM = "debian12"
PLATFORMS = ["debian12", "debian13", "ubuntu2204", "ubuntu2404", "ubuntu2604"]
SITE = "site"
# Role scenarios whose converge and tests the site run on Debian 12 repeats exactly (the same role defaults, the
# same platform, test_site.py imports their tests): CI runs them there only once, in site@debian12. They stay
# runnable by name (make molecule SCENARIOS=nvidia_driver) for work on one role.
# gpu_plugins: the real Debian nvidia-smi without a GPU; site@debian12 installs it through the driver role and imports
# the same checks (molecule/nvidia_driver/tests: nvidia-smi fails on NVML, gpu_facts and gpu_health say so).
# jupyter: site@debian13 logs in with a password (molecule/site/converge.yml) and imports every test of the scenario.
# base: the site's prepare imports base's (a dpkg lock holder, a cloud-init first boot) and its verifier every base test.
COVERED_BY_SITE = ["nvidia_driver", "cuda_toolkit", "gpu_plugins", "jupyter", "base"]
# Scenarios in a booted QEMU guest (TCG, a core of their own for half an hour or more): the heavier tier, `make test-vm`,
# not `make test`. storage's VM took 1,079 s in the CI run of 03aee0e and 2,071 s in that of b4050c7 (2026-12-03, a
# slower day: the container runs beside it took 1.6 times as long too), which put .ci/run past its 60 minutes.
VM_SCENARIOS = ["storage"]
# Scenarios on real distribution kernels (kernel packages, DKMS builds, initramfs images): `make test-kernel`, not
# `make test`. nvidia_driver_kernels took 1,142 s beside two other scenarios (two DKMS builds of about 4 min each);
# in the clean-clone CI run of 2026-12-03 (site@debian12 1,147 s, 818 s the day before) it took 1,235 s and `.ci/run`
# 70 min; on a day as slow as b4050c7's (1.6 times) that passes CI's 90-minute limit. It goes back into `make test`
# once CI's other runs are cheaper (issue 31).
KERNEL_SCENARIOS = ["nvidia_driver_kernels"]

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
                and name not in KERNEL_SCENARIOS]
    return sorted(out, key=rank)


def step(run, name, platforms):
    """The Molecule step that stands for step NAME of RUN: NAME, or prepare (skipped once prepared) for a site run on a
    platform outside PLATFORMS."""
    scenario, _sep, platform = run.partition("@")
    if scenario == SITE and (platform or DEFAULT_PLATFORM) not in platforms:
        return "prepare"
    return name


def run_timeout(run):
    """Seconds RUN may take before scripts/molecule-all.sh kills it and tries once more: three times its time in a CI
    run (SECONDS comes from a quiet machine; a busy one took up to 1.4 times as long), at least 900 (an apt index
    refresh has hung twice in fleet_upgrade, with every process asleep in poll)."""
    return max(900, 3 * SECONDS.get(run, SECONDS.get(run.partition("@")[0], UNKNOWN_SECONDS)))


def check_step(run):
    """The step that stands for the check pass of RUN."""
    return step(run, "check", SITE_CHECK_PLATFORMS)


def idempotence_step(run):
    """The step that stands for the idempotence pass of RUN."""
    return step(run, "idempotence", SITE_IDEMPOTENCE_PLATFORMS)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--check-step"]:
        print(check_step(sys.argv[2]))
        sys.exit(0)
    if sys.argv[1:2] == ["--timeout"]:
        print(run_timeout(sys.argv[2]))
        sys.exit(0)
    if sys.argv[1:2] == ["--vm"]:
        print(" ".join(VM_SCENARIOS))
        sys.exit(0)
    if sys.argv[1:2] == ["--kernel"]:
        print(" ".join(KERNEL_SCENARIOS))
        sys.exit(0)
    if sys.argv[1:2] == ["--idempotence-step"]:
        print(idempotence_step(sys.argv[2]))
        sys.exit(0)
    wanted = sys.argv[1:] or PLATFORMS
    unknown = sorted(set(wanted) - set(PLATFORMS))
    if unknown:
        sys.exit("unknown platform(s) %s: choose from %s" % (", ".join(unknown), ", ".join(PLATFORMS)))
    print(" ".join(runs([p for p in PLATFORMS if p in wanted])))
