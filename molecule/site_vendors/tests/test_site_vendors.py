"""Verify site.yml's choice of vendor on one inventory: the fake NVIDIA host got the NVIDIA driver's user space (held)
and nothing of AMD's; the fake AMD host got the distribution's AMD firmware and ROCm (held), its GPU user in render and
video, the CDI specification of its devices, and nothing of NVIDIA's. Each host's absent packages are the negative
control: a vendor role run on the wrong host would install them."""
import json

import pytest

# Debian 13's packages (molecule/nvidia_driver/tests, plugins/module_utils/_data_rocm.py DISTRIBUTION_PACKAGES).
NVIDIA = ["nvidia-smi", "libnvidia-ml1", "libcuda1"]
AMD = ["firmware-amd-graphics", "rocminfo", "rocm-smi", "amd-smi", "librocblas0"]
# dpkg patterns of everything the other vendor's roles install on Debian 13.
OTHER = {"nvidia": ["firmware-amd-graphics", "rocm*", "amd-smi", "libamdhip64*", "libhsa-runtime64*", "librocblas*",
                    "librccl*"],
         "amd": ["*nvidia*", "libcuda*"]}


def _vendor(host):
    return host.backend.get_hostname().rsplit("-", 1)[-1]


def _installed(host, names):
    return [n for n in names if host.package(n).is_installed]


def test_each_host_has_its_vendors_packages_held(host):
    mine = NVIDIA if _vendor(host) == "nvidia" else AMD
    assert _installed(host, mine) == mine
    held = host.check_output("apt-mark showhold").split()
    # ROCm's user space is the distribution's, not held; the driver side is.
    must_hold = NVIDIA if _vendor(host) == "nvidia" else ["firmware-amd-graphics"]
    assert [n for n in must_hold if n not in held] == [], held


def test_no_host_has_the_other_vendors_packages(host):
    other = AMD if _vendor(host) == "nvidia" else NVIDIA
    assert _installed(host, other) == []
    # Nor anything else of the other vendor's.
    patterns = " ".join("'%s'" % p for p in OTHER[_vendor(host)])
    listed = host.run("dpkg-query -W -f '${Package} ${db:Status-Status}\\n' %s" % patterns).stdout.splitlines()
    assert [line for line in listed if line.endswith(" installed")] == []


def test_the_vendor_config_files_are_on_their_host_only(host):
    amd = _vendor(host) == "amd"
    assert host.file("/etc/apt/apt.conf.d/51gpuops-amd-driver").exists is amd
    assert host.file("/etc/cdi/amd.json").exists is amd


@pytest.mark.parametrize("group", ["render", "video"])
def test_the_amd_hosts_gpu_user_joined_render_and_video(host, group):
    if _vendor(host) != "amd":
        pytest.skip("the NVIDIA host's roles add no user to %s" % group)
    assert group in host.user("gpuuser").groups


def test_the_amd_hosts_cdi_spec_names_its_eight_render_nodes(host):
    if _vendor(host) != "amd":
        pytest.skip("no CDI specification for AMD on the NVIDIA host")
    spec = json.loads(host.file("/etc/cdi/amd.json").content_string)
    paths = {n["path"] for d in spec["devices"] for n in d["containerEdits"].get("deviceNodes", [])}
    assert sorted(paths) == sorted("/dev/dri/renderD%d" % (128 + i) for i in range(8))
