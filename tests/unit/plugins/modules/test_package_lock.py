# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import subprocess
import sys
import time

import pytest

from ansible_collections.gpuops.gpu_server.plugins.modules import package_lock

HOLD = "import fcntl, sys, time; f = open(sys.argv[1], 'w'); fcntl.lockf(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(float(sys.argv[2]))"


@pytest.fixture
def holder(tmp_path):
    """Start a process that holds an fcntl write lock on a file (as dpkg does) for some seconds."""
    procs = []

    def start(seconds):
        path = tmp_path / "lock-frontend"
        path.touch()
        proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "held"
        procs.append(proc)
        return str(path), proc
    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def test_free_lock_returns_at_once(run_module, tmp_path):
    path = tmp_path / "lock"
    path.touch()
    result = run_module(package_lock.main, {"paths": [str(path), str(tmp_path / "absent")], "timeout": 5})
    assert not result.failed and result["changed"] is False
    assert result["holders"] == [] and result["waited"] < 1


def test_waits_until_the_holder_lets_go(run_module, holder):
    path, proc = holder(1.5)
    start = time.time()
    result = run_module(package_lock.main, {"paths": [path], "timeout": 30, "sleep": 0.2})
    assert not result.failed
    assert time.time() - start >= 1.0
    assert result["holders"][0]["pid"] == proc.pid
    assert "fcntl" in result["holders"][0]["command"]
    assert result["waited"] >= 1.0


def test_timeout_names_the_holder_and_the_variable(run_module, holder):
    path, proc = holder(30)
    result = run_module(package_lock.main, {"paths": [path], "timeout": 1, "sleep": 0.2})
    assert result.failed
    assert "pid %d" % proc.pid in result["msg"]
    assert path in result["msg"]
    assert "base_package_lock_timeout" in result["msg"]


def test_pid_file_of_a_dead_process_is_not_held(tmp_path):
    pidfile = tmp_path / "yum.pid"
    pidfile.write_text("999999999\n")
    assert package_lock.holders_of([str(pidfile)]) == []
    pidfile.write_text("%d\n" % subprocess.os.getpid())
    assert package_lock.holders_of([str(pidfile)])[0]["pid"] == subprocess.os.getpid()


# Issue 17: range checks, a bounded wait, OFD and flock locks.

HOLD_KIND = """
import fcntl, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
if sys.argv[2] == 'ofd':
    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack('hhqqi4x', fcntl.F_WRLCK, 0, 0, 0, 0))
else:
    fcntl.flock(fd, fcntl.LOCK_EX)
print('held', flush=True)
time.sleep(float(sys.argv[3]))
"""


@pytest.fixture
def kind_holder(tmp_path):
    procs = []

    def start(kind, seconds):
        path = tmp_path / ("lock-" + kind)
        path.touch()
        proc = subprocess.Popen([sys.executable, "-c", HOLD_KIND, str(path), kind, str(seconds)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "held"
        procs.append(proc)
        return str(path), proc
    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("args,msg", [
    ({"sleep": -1}, "sleep must be more than 0 seconds, got -1.0"),
    ({"sleep": 0}, "sleep must be more than 0 seconds, got 0.0"),
    ({"timeout": -5}, "timeout must be 0 or more seconds, got -5"),
])
def test_out_of_range_options_fail(run_module, tmp_path, args, msg):
    path = tmp_path / "lock"
    path.touch()
    result = run_module(package_lock.main, dict(paths=[str(path)], **args))
    assert result.failed and result["msg"] == msg


def test_sleep_longer_than_timeout_does_not_overshoot(run_module, holder):
    path, proc = holder(30)
    start = time.time()
    result = run_module(package_lock.main, {"paths": [path], "timeout": 1, "sleep": 10})
    assert time.time() - start < 4
    assert result.failed
    assert 1.0 <= result["waited"] < 2.5
    assert "still locked after 1." in result["msg"]


def test_ofd_lock_names_the_real_holder(run_module, kind_holder):
    path, proc = kind_holder("ofd", 30)
    result = run_module(package_lock.main, {"paths": [path], "timeout": 0})
    assert result.failed
    assert [(h["pid"], h["lock"]) for h in result["holders"]] == [(proc.pid, "ofd")]
    assert "pid %d" % proc.pid in result["msg"] and "pid -1" not in result["msg"]


def test_flock_lock_is_seen(run_module, kind_holder):
    path, proc = kind_holder("flock", 30)
    result = run_module(package_lock.main, {"paths": [path], "timeout": 0})
    assert result.failed
    assert [(h["pid"], h["lock"]) for h in result["holders"]] == [(proc.pid, "flock")]


def test_flock_holder_is_waited_for(run_module, kind_holder):
    path, proc = kind_holder("flock", 1.5)
    result = run_module(package_lock.main, {"paths": [path], "timeout": 30, "sleep": 0.2})
    assert not result.failed and result["waited"] >= 1.0
    assert result["holders"][0]["lock"] == "flock"
