"""Print the Molecule runs of `make molecule`, in the order site.yml runs the roles.

Every scenario runs on Debian 12 (printed as its bare name); the role scenarios in MATRIX run on the other
platforms too, printed as `scenario@platform`. scripts/molecule-all.sh starts each run with that platform's
image (tests/images/build.sh PLATFORM builds it).
"""
import os
import sys

ORDER = ["base", "gpu_plugins", "nvidia_driver", "cuda_toolkit", "docker", "nvidia_container_toolkit",
         "hardening", "log_management", "gpu_monitoring"]
DEFAULT_PLATFORM = "debian12"
PLATFORMS = ["debian12", "debian13", "ubuntu2204", "ubuntu2404"]
# The scenarios that converge each role on the other platforms too (the others test code paths that do not
# depend on the platform: refusals, plugins, exporters from archives, Docker's own repository), and where.
# Only the runs seen passing are listed; the rest of the matrix (docker and log_management on Ubuntu,
# nvidia_driver and the others on Debian 13 ...) is still being fixed, see the platform table in the README.
MATRIX = {
    "base": ["debian13", "ubuntu2204"],
    "nvidia_driver": ["ubuntu2404"],
    "cuda_toolkit": ["ubuntu2404"],
    "hardening": ["ubuntu2204", "ubuntu2404"],
    "gpu_monitoring": ["ubuntu2404"],
}

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "molecule")
present = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "molecule.yml")))


def rank(name):
    for i, prefix in enumerate(ORDER):
        if name == prefix or name.startswith(prefix + "_"):
            return (i, name != prefix, name)
    return (len(ORDER), True, name)


def runs(platforms):
    """Debian 12 runs first, then the matrix platform by platform (one scenario never runs twice at once)."""
    ordered = sorted(present, key=rank)
    out = []
    for platform in platforms:
        for name in ordered:
            if platform == DEFAULT_PLATFORM:
                out.append(name)
            elif platform in MATRIX.get(name, []):
                out.append("%s@%s" % (name, platform))
    return out


if __name__ == "__main__":
    wanted = sys.argv[1:] or PLATFORMS
    unknown = sorted(set(wanted) - set(PLATFORMS))
    if unknown:
        sys.exit("unknown platform(s) %s: choose from %s" % (", ".join(unknown), ", ".join(PLATFORMS)))
    print(" ".join(runs([p for p in PLATFORMS if p in wanted])))
