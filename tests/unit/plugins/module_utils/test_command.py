# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_command.run's input and environment (its output, timeout and size limits: test_kernel_log.py, test_bounded_reads.py)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import time

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command


def test_stdin_reaches_the_command_and_is_closed():
    rc, out, err = _command.run(['cat'], stdin='pass word\nsalt\n')
    assert (rc, out, err) == (0, 'pass word\nsalt\n', '')
    assert _command.run(['cat'], stdin=b'\xff\x00x')[1] == '\ufffd\x00x'


def test_without_stdin_the_command_reads_dev_null():
    start = time.monotonic()
    assert _command.run(['cat'], timeout=5) == (0, '', '')
    assert time.monotonic() - start < 4


def test_input_larger_than_a_pipe_while_the_output_is_read():
    """4 MiB in and out: written and read against one deadline, no deadlock on full pipes."""
    data = 'x' * (4 * 1024 * 1024)
    rc, out, _err = _command.run(['cat'], stdin=data, timeout=30)
    assert rc == 0 and len(out) == len(data)


def test_a_command_that_does_not_read_its_input():
    rc, out, _err = _command.run(['sh', '-c', 'echo done'], stdin='y' * (1024 * 1024), timeout=10)
    assert (rc, out) == (0, 'done\n')


def test_a_command_that_never_reads_times_out():
    with pytest.raises(_command.CommandTimeout):
        _command.run(['sleep', '30'], stdin='z' * (1024 * 1024), timeout=1)


def test_an_environment_of_its_own(monkeypatch):
    monkeypatch.setenv('GPUOPS_TEST_SECRET', 'leak')
    rc, out, _err = _command.run(['/usr/bin/env'], env={'PATH': '/usr/bin:/bin', 'ONLY': '1'}, inherit_env=False)
    assert rc == 0
    assert sorted(out.splitlines()) == ['LANG=C', 'LC_ALL=C', 'ONLY=1', 'PATH=/usr/bin:/bin']
    rc, out, _err = _command.run(['/usr/bin/env'], env={'ONLY': '1'})
    assert 'GPUOPS_TEST_SECRET=leak' in out.splitlines() and 'ONLY=1' in out.splitlines()
