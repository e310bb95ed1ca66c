# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Every read is bounded in time and size: commands, saved kernel logs, the nvidia-smi DOCTYPE scan (issue 17)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import signal
import stat
import time

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_log as kl
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi
from ansible_collections.gpuops.gpu_server.tests.support.waiting import wait_for


def _script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text('#!/bin/sh\n' + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def escaped(tmp_path):
    """A pid file for a grandchild that leaves the process group with setsid; killed after the test."""
    pidfile = tmp_path / 'grandchild.pid'
    yield pidfile
    try:
        wait_for(pidfile.exists, 5, "the grandchild's pid file", step=0.05)
    except AssertionError:
        return  # it never started: nothing to kill
    try:
        os.kill(int(pidfile.read_text().strip()), signal.SIGKILL)
    except (OSError, ValueError):
        pass


@pytest.mark.parametrize('tail', ['sleep 20', 'echo started; exit 0'], ids=['child-hangs', 'child-exits'])
def test_timeout_is_hard_with_a_setsid_grandchild_holding_stdout(tmp_path, escaped, tail):
    """The grandchild escapes the killed process group and keeps stdout open for 20 s: the call still ends."""
    exe = _script(tmp_path, 'escapes', "setsid sh -c 'echo $$ > %s; exec sleep 20' &\n%s\n" % (escaped, tail))
    start = time.monotonic()
    with pytest.raises(_command.CommandTimeout, match='within 1 seconds'):
        _command.run([exe], timeout=1)
    assert time.monotonic() - start < 5


def test_output_is_capped(tmp_path):
    start = time.monotonic()
    with pytest.raises(_command.CommandOutputTooLarge, match='more than 1048576 bytes'):
        _command.run(['cat', '/dev/zero'], timeout=20, max_bytes=1024 * 1024)
    assert time.monotonic() - start < 5


def test_large_output_below_the_cap_is_complete(tmp_path):
    rc, out, err = _command.run(['sh', '-c', 'head -c 3000000 /dev/zero | tr "\\0" x; echo oops >&2'], timeout=20)
    assert (rc, len(out), err) == (0, 3000000, 'oops\n')


@pytest.mark.parametrize('timeout', [0, -1, None])
def test_timeout_must_be_positive(timeout):
    with pytest.raises(ValueError, match='timeout must be a positive number'):
        _command.run(['true'], timeout=timeout)


def test_kernel_log_file_fifo_does_not_hang(tmp_path):
    fifo = str(tmp_path / 'fifo')
    os.mkfifo(fifo)
    start = time.monotonic()
    with pytest.raises(kl.KernelLogError, match='is a FIFO, not a regular file'):
        kl.read_file(fifo)
    assert time.monotonic() - start < 2


def test_kernel_log_file_dev_zero_is_refused():
    with pytest.raises(kl.KernelLogError, match='is a character device, not a regular file'):
        kl.read_file('/dev/zero')


def test_kernel_log_file_size_cap(tmp_path):
    big = tmp_path / 'big.log'
    big.write_bytes(b'x' * 2048)
    with pytest.raises(kl.KernelLogError, match='more than the 1024 bytes'):
        kl.read_file(str(big), max_bytes=1024)
    assert kl.read_file(str(big), max_bytes=4096) == 'x' * 2048


def test_kernel_log_file_missing(tmp_path):
    with pytest.raises(kl.KernelLogError, match='could not be read: No such file'):
        kl.read_file(str(tmp_path / 'missing.log'))


def test_doctype_scan_is_linear():
    """Thousands of unterminated DOCTYPEs: the old regular expression took seconds (super-linear)."""
    hostile = '<nvidia_smi_log>' + '<!DOCTYPE a [x' * 5000
    start = time.monotonic()
    assert _nvidia_smi.strip_doctype(hostile) == hostile
    with pytest.raises(_nvidia_smi.NvidiaSmiParseError):
        _nvidia_smi.parse(hostile)
    assert time.monotonic() - start < 1


@pytest.mark.parametrize('text,stripped', [
    ('<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">\n<nvidia_smi_log/>', '\n<nvidia_smi_log/>'),
    ('<!doctype x [ <!ELEMENT a (#PCDATA)> ] >\n<x/>', '\n<x/>'),
    ('<!DOCTYPE x [ a ] b ]>\n<x/>', '\n<x/>'),
    ('<x/>', '<x/>'),
    ('<!DOCTYPEX y><x/>', '<!DOCTYPEX y><x/>'),
])
def test_doctype_forms(text, stripped):
    assert _nvidia_smi.strip_doctype(text) == stripped
