"""The rocm role refuses, in preflight and before any change, a ROCm source whose libraries carry no code object for
the GPUs on the PCI bus, naming what works; the same bus passes where the source carries the target."""
import json
import os

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import needs_ansible_playbook, run_playbook
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import build_sysfs

HERE = os.path.dirname(os.path.abspath(__file__))

pytestmark = needs_ansible_playbook

PLATFORMS = {"debian12": ("Debian", "12", "bookworm"), "debian13": ("Debian", "13", "trixie"),
             "ubuntu2404": ("Ubuntu", "24.04", "noble"), "ubuntu2604": ("Ubuntu", "26.04", "resolute")}


def preflight(tmp_path, platform, bus, **variables):
    distribution, release, codename = PLATFORMS[platform]
    sysfs = build_sysfs(tmp_path / "sys", bus)
    extra = dict(variables, rocm_sysfs_root=sysfs, rocm_test_distribution=distribution, rocm_test_release=release,
                 rocm_test_codename=codename)
    result = run_playbook(os.path.join(HERE, "rocm_refuses.yml"), "--check", "--tags", "rocm_preflight",
                          "-e", json.dumps(extra), timeout=300)
    return result.returncode, " ".join(result.stdout.split())


def test_mi300x_with_debian13_distribution_rocm_is_refused_naming_what_works(tmp_path):
    rc, out = preflight(tmp_path, "debian13", "amd_mi300x_node.yml")
    assert rc != 0, out
    assert "rocm_source: Debian 13's distribution ROCm (librocblas0 5.5.1) carries no code object for gfx942" in out
    assert "Ubuntu 26.04's distribution ROCm; AMD's ROCm 7 repository (set rocm_source to amd" in out
    assert "Traceback" not in out


@pytest.mark.parametrize("platform, bus, variables", [
    ("ubuntu2604", "amd_mi300x_node.yml", {}),                       # Ubuntu 26.04's rocBLAS carries gfx942
    ("debian13", "amd_mi300x_node.yml", {"rocm_source": "amd"}),      # so does AMD's repository
    ("debian13", "amd_mi250_node.yml", {}),                           # and Debian 13's carries the MI250's gfx90a
])
def test_negative_control_the_same_check_passes_where_the_target_is_carried(tmp_path, platform, bus, variables):
    variables.setdefault("rocm_repo_suite", "/")
    rc, out = preflight(tmp_path, platform, bus, **variables)
    assert rc == 0, out


@pytest.mark.parametrize("platform, variables, said", [
    ("debian12", {}, "Debian 12's distribution ROCm carries no ROCm library"),
    ("ubuntu2404", {"rocm_users": ["nosuchuser-rocm"]}, "rocm_users names users that do not exist"),
    ("ubuntu2404", {"rocm_users": ["root\nx"]}, "rocm_users is a list of user names"),
    ("ubuntu2404", {"rocm_source": "Distribution"}, "value of rocm_source must be one of: distribution, amd"),
    ("debian13", {"rocm_source": "amd"}, "rocm_repo_suite is set"),
])
def test_wrong_settings_are_refused_by_name(tmp_path, platform, variables, said):
    rc, out = preflight(tmp_path, platform, "amd_mi250_node.yml", **variables)
    assert rc != 0, out
    assert said in out, out
    assert "Traceback" not in out
