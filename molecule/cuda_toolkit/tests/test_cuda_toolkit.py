"""Verify the cuda_toolkit role in a container of each platform: the distribution's CUDA, paths, a sample compiled."""
import re

import pytest

# The toolkit each platform ships (the converge asks for it).
VERSIONS = {("debian", "12"): "11.8", ("debian", "13"): "12.4", ("ubuntu", "22.04"): "11.5", ("ubuntu", "24.04"): "12.0",
            ("ubuntu", "26.04"): "12.4"}


@pytest.fixture(scope="module")
def v(host):
    info = host.system_info
    return VERSIONS[(info.distribution, info.release.split(".")[0] if info.distribution == "debian" else info.release)]


def test_toolkit_installed(host, v):
    pkg = host.package("nvidia-cuda-toolkit")
    assert pkg.is_installed
    assert pkg.version.startswith(v + "."), pkg.version


def test_nvcc_reports_the_version(host, v):
    for nvcc in ["/usr/local/cuda-%s/bin/nvcc" % v, "/usr/local/cuda/bin/nvcc", "/usr/bin/nvcc"]:
        out = host.check_output("%s --version" % nvcc)
        assert re.search(r"release %s, V%s\.\d+" % (re.escape(v), re.escape(v)), out), (nvcc, out)


def test_usr_local_cuda_is_the_default_alternative(host, v):
    assert host.file("/usr/local/cuda").is_symlink
    assert host.check_output("readlink -f /usr/local/cuda") == "/usr/local/cuda-%s" % v
    out = host.check_output("update-alternatives --query cuda")
    assert re.search(r"^Value: /usr/local/cuda-%s$" % re.escape(v), out, re.M), out


def test_layout_links(host, v):
    for sub, target in [("bin", "/usr/lib/nvidia-cuda-toolkit/bin"), ("include", "/usr/include"),
                        ("lib64", "/usr/lib/x86_64-linux-gnu")]:
        f = host.file("/usr/local/cuda-%s/%s" % (v, sub))
        assert f.is_symlink and f.linked_to == target
    assert host.file("/usr/local/cuda/include/cuda_runtime.h").exists
    assert host.file("/usr/local/cuda/lib64/libcudart.so").exists


def test_environment_files(host):
    profile = host.file("/etc/profile.d/cuda.sh")
    assert profile.exists and profile.mode == 0o644
    assert "CUDA_HOME=/usr/local/cuda" in profile.content_string
    ld = host.file("/etc/ld.so.conf.d/cuda.conf")
    assert ld.content_string.splitlines()[-1] == "/usr/local/cuda/lib64"
    # A login shell gets CUDA_HOME, and the system compiler is not hidden by the toolkit's gcc-11 wrapper.
    assert host.check_output("bash -lc 'echo $CUDA_HOME'") == "/usr/local/cuda"
    assert host.check_output("bash -lc 'command -v gcc'") == "/usr/bin/gcc"
    # ldconfig knows the CUDA runtime.
    assert "libcudart.so" in host.check_output("ldconfig -p")


def test_sample_compiled_by_the_role(host, v):
    binary = host.file("/var/lib/gpuops/cuda_toolkit-verify/sample-%s" % v)
    assert binary.exists and binary.mode & 0o111
    # cuobjdump shows the sm_70 code the role asked for.
    out = host.check_output("cuobjdump --list-elf /var/lib/gpuops/cuda_toolkit-verify/sample-%s" % v)
    assert "sm_70" in out, out


def test_sample_compiles_for_another_architecture(host):
    # nvcc works for users too, not only for the role: compile only (no GPU here).
    cmd = host.run("cd /tmp && nvcc -arch=sm_80 -c -o /tmp/gpuops-sample.o /var/lib/gpuops/cuda_toolkit-verify/sample.cu")
    assert cmd.rc == 0, cmd.stderr


def test_binary_says_no_gpu_honestly(host, v):
    # Without a GPU the sample fails cleanly at its first CUDA call.
    r = host.run("/var/lib/gpuops/cuda_toolkit-verify/sample-%s" % v)
    assert r.rc == 2, (r.rc, r.stdout, r.stderr)
    assert "no usable GPU" in r.stdout
