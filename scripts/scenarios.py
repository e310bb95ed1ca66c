"""Print the Molecule runs of `make molecule`: `site` on every platform, then the role scenarios on Debian 12.

`site` (site.yml with the demo's inventory on one host) runs on each platform, printed as `site@platform`
(scripts/molecule-all.sh starts it with that platform's image, tests/images/build.sh PLATFORM builds it); its
verifier reuses the role scenarios' tests that hold on any host. The role scenarios (refusals, lockout guard,
collectors, exporters, fixture repositories, several hosts) run on Debian 12, printed as their bare names.
The site runs come first: they are the longest, and two of them run side by side (their names carry the platform).
"""
import os
import sys

ORDER = ["base", "gpu_plugins", "nvidia_driver", "cuda_toolkit", "docker", "nvidia_container_toolkit",
         "hardening", "log_management", "gpu_monitoring",
         "spot"]
DEFAULT_PLATFORM = "debian12"
PLATFORMS = ["debian12", "debian13", "ubuntu2204", "ubuntu2404"]
SITE = "site"
# Role scenarios whose converge and tests the site run on Debian 12 repeats exactly (the same role defaults, the
# same platform, test_site.py imports their tests): CI runs them there only once, in site@debian12. They stay
# runnable by name (make molecule SCENARIOS=nvidia_driver) for work on one role.
COVERED_BY_SITE = ["nvidia_driver", "cuda_toolkit"]

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "molecule")
present = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "molecule.yml")))


def rank(name):
    for i, prefix in enumerate(ORDER):
        if name == prefix or name.startswith(prefix + "_"):
            return (i, name != prefix, name)
    return (len(ORDER), True, name)


def runs(platforms):
    """site@platform for each platform (Ubuntu first: its toolkit downloads are the largest), then the role
    scenarios in the order site.yml runs the roles when Debian 12 is among the platforms."""
    out = ["%s@%s" % (SITE, p) for p in sorted(platforms, key=lambda p: (not p.startswith("ubuntu"), p))]
    if DEFAULT_PLATFORM in platforms:
        out += sorted((name for name in present if name != SITE and name not in COVERED_BY_SITE), key=rank)
    return out


if __name__ == "__main__":
    wanted = sys.argv[1:] or PLATFORMS
    unknown = sorted(set(wanted) - set(PLATFORMS))
    if unknown:
        sys.exit("unknown platform(s) %s: choose from %s" % (", ".join(unknown), ", ".join(PLATFORMS)))
    print(" ".join(runs([p for p in PLATFORMS if p in wanted])))
