"""cuda_toolkit from NVIDIA's repository (signed fixture): two versions side by side, alternatives, environment."""
import re

import pytest

from ansible_collections.gpuops.gpu_server.tests.fixtures.apt_repo.repo_checks import assert_vendor_repo


def test_repository_signed_by_and_pinned(host):
    assert_vendor_repo(host, "cuda", "http://127.0.0.1:8765/")
    policy = host.check_output("apt-cache policy cuda-toolkit-12-4")
    assert re.search(r"600 http://127\.0\.0\.1:8765\s+Packages", policy), policy


@pytest.mark.parametrize("version", ["11.8", "12.4"])
def test_side_by_side(host, version):
    assert host.package("cuda-toolkit-%s" % version.replace(".", "-")).is_installed
    out = host.check_output("/usr/local/cuda-%s/bin/nvcc --version" % version)
    assert "release %s," % version in out


def test_alternative_selects_the_default(host):
    out = host.check_output("update-alternatives --query cuda")
    assert re.search(r"^Value: /usr/local/cuda-12\.4$", out, re.M), out
    assert "Alternative: /usr/local/cuda-11.8" in out
    assert host.check_output("readlink -f /usr/local/cuda") == "/usr/local/cuda-12.4"


def test_login_shell_finds_the_default_nvcc(host):
    assert "/usr/local/cuda/bin/nvcc" == host.check_output("bash -lc 'command -v nvcc'")
    assert "release 12.4," in host.check_output("bash -lc 'nvcc --version'")
    assert host.check_output("bash -lc 'echo $CUDA_HOME'") == "/usr/local/cuda"


def test_ld_so_conf(host):
    assert host.file("/etc/ld.so.conf.d/cuda.conf").content_string.splitlines()[-1] == "/usr/local/cuda/lib64"


@pytest.mark.parametrize("version", ["11.8", "12.4"])
def test_each_nvcc_was_asked_to_compile_the_sample(host, version):
    # The fixture nvcc writes a stub where the real one would write the binary.
    out = host.check_output("/var/lib/gpuops/cuda_toolkit-verify/sample-%s" % version)
    assert out == "gpuops test fixture output of nvcc %s" % version
