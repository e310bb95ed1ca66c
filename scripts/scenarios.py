"""Print the Molecule scenarios in the order site.yml runs the roles, then the extra scenarios."""
import os

ORDER = ["base", "gpu_plugins", "nvidia_driver", "cuda_toolkit", "docker", "nvidia_container_toolkit",
         "hardening", "log_management", "gpu_monitoring"]

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "molecule")
present = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "molecule.yml")))


def rank(name):
    for i, prefix in enumerate(ORDER):
        if name == prefix or name.startswith(prefix + "_"):
            return (i, name != prefix, name)
    return (len(ORDER), True, name)


print(" ".join(sorted(present, key=rank)))
