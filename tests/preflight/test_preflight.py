"""A wrong variable type or an unsupported platform fails in preflight, with a message that names it."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run_playbook(playbook, *extra):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".cache", "collections"),
               ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1", ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default")
    bindir = os.path.dirname(sys.executable)
    cmd = [os.path.join(bindir, "ansible-playbook"), "-i", "localhost,", "-c", "local", "--check",
           "-e", "ansible_python_interpreter=%s" % sys.executable, os.path.join(HERE, playbook)] + list(extra)
    return subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("distribution,major", [("Fedora", "40"), ("Debian", "10"), ("Ubuntu", "18")])
def test_unsupported_platform_is_refused_by_name(distribution, major):
    result = run_playbook("base_refuses.yml", "-e", "fake_distribution=%s" % distribution, "-e", "fake_major=%s" % major)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert "%s " % distribution in out and "is not supported by gpuops.gpu_server.base" in out, out
    # nothing after the platform check ran
    assert "Package sources" not in out, out


def test_wrong_variable_type_is_refused_by_name():
    result = run_playbook("base_refuses.yml", "-e", "base_package_lock_timeout=soon")
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert "base_package_lock_timeout" in out and "int" in out, out
    assert "Assert that the platform is supported" not in out, out
