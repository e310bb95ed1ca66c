# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import time

import pytest

from ansible_collections.gpuops.gpu_server.plugins.modules import package_lock


@pytest.fixture
def holder(tmp_path, hold_file):
    """``holder(seconds, how='lockf')`` -> (path, process): a lock file that another process holds for some seconds:
    an fcntl write lock (as dpkg holds its own), or an OFD or flock lock."""
    def start(seconds, how='lockf'):
        path = tmp_path / ('lock-frontend' if how == 'lockf' else 'lock-' + how)
        path.touch()
        return str(path), hold_file(path, how, seconds)
    return start


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
    pidfile.write_text("%d\n" % os.getpid())
    assert package_lock.holders_of([str(pidfile)])[0]["pid"] == os.getpid()


# Issue 17: range checks, a bounded wait, OFD and flock locks.

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


def test_ofd_lock_names_the_real_holder(run_module, holder):
    path, proc = holder(30, "ofd")
    result = run_module(package_lock.main, {"paths": [path], "timeout": 0})
    assert result.failed
    assert [(h["pid"], h["lock"]) for h in result["holders"]] == [(proc.pid, "ofd")]
    assert "pid %d" % proc.pid in result["msg"] and "pid -1" not in result["msg"]


def test_flock_lock_is_seen(run_module, holder):
    path, proc = holder(30, "flock")
    result = run_module(package_lock.main, {"paths": [path], "timeout": 0})
    assert result.failed
    assert [(h["pid"], h["lock"]) for h in result["holders"]] == [(proc.pid, "flock")]


def test_flock_holder_is_waited_for(run_module, holder):
    path, proc = holder(1.5, "flock")
    result = run_module(package_lock.main, {"paths": [path], "timeout": 30, "sleep": 0.2})
    assert not result.failed and result["waited"] >= 1.0
    assert result["holders"][0]["lock"] == "flock"


def test_missing_packages_read_from_dpkg_status(run_module, tmp_path, monkeypatch):
    status = tmp_path / "status"
    status.write_text("Package: logrotate\nStatus: install ok installed\nArchitecture: all\nVersion: 3.21.0-1\n\n"
                      "Package: rsyslog\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 8.2302.0-1\n")
    monkeypatch.setattr(package_lock, "DPKG_STATUS", str(status))
    result = run_module(package_lock.main, {"paths": [str(tmp_path / "absent")], "timeout": 0,
                                            "packages": ["logrotate", "rsyslog", "logrotate=3.20.0-1"]})
    assert not result.failed and result["changed"] is False
    assert result["missing"] == ["rsyslog", "logrotate=3.20.0-1"]


def test_without_dpkg_every_package_is_missing(run_module, tmp_path, monkeypatch):
    monkeypatch.setattr(package_lock, "DPKG_STATUS", str(tmp_path / "no-status"))
    result = run_module(package_lock.main, {"paths": [str(tmp_path / "absent")], "timeout": 0,
                                            "packages": ["logrotate"]})
    assert result["missing"] == ["logrotate"]
    result = run_module(package_lock.main, {"paths": [str(tmp_path / "absent")], "timeout": 0})
    assert result["missing"] == []
