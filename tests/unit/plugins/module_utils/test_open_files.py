# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_open_files: the /proc scan behind package_lock's OFD holder and the spot tool's files still being written."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _open_files


def test_the_other_processes_that_hold_a_file_open(tmp_path, hold_file):
    path = tmp_path / 'lock'
    path.write_text('')
    st = os.stat(str(path))
    assert _open_files.pids_with_open(st) == []
    reader = hold_file(path, 'r')
    with open(str(path)):      # this process is never its own holder
        assert _open_files.pids_with_open(st) == [reader.pid]
    writer = hold_file(path, 'a')
    assert sorted(_open_files.pids_with_open(st)) == sorted([reader.pid, writer.pid])
    other = tmp_path / 'other'
    other.write_text('')
    assert _open_files.pids_with_open(os.stat(str(other))) == []


def test_files_open_for_writing_under_a_directory(tmp_path, hold_file):
    root = tmp_path / 'ckpt'
    root.mkdir()
    for name in ('read.pt', 'append.pt', 'update.pt', 'idle.pt'):
        (root / name).write_text('x')
    (tmp_path / 'outside.pt').write_text('x')
    hold_file(root / 'read.pt', 'r')
    hold_file(root / 'append.pt', 'a')
    hold_file(root / 'update.pt', 'r+')
    hold_file(tmp_path / 'outside.pt', 'a')
    assert _open_files.open_for_writing(str(root)) == {str(root / 'append.pt'), str(root / 'update.pt')}
    assert _open_files.open_for_writing(str(root) + '/') == {str(root / 'append.pt'), str(root / 'update.pt')}


def test_a_proc_without_processes_or_unreadable(tmp_path):
    assert list(_open_files.descriptors(str(tmp_path / 'missing'))) == []
    fake = tmp_path / 'proc'
    (fake / '12' / 'fd').mkdir(parents=True)
    (fake / '13').mkdir()               # a process that exited during the scan: no fd directory
    (fake / 'self').mkdir()
    os.symlink('/nowhere/file', str(fake / '12' / 'fd' / '3'))
    (fake / '12' / 'fdinfo').mkdir()
    (fake / '12' / 'fdinfo' / '3').write_text('pos:\t0\nflags:\t0100001\n')
    assert list(_open_files.descriptors(str(fake))) == [(12, str(fake / '12' / 'fd' / '3'))]
    assert _open_files.open_flags(str(fake / '12' / 'fd' / '3')) == 0o100001
    assert _open_files.open_for_writing('/nowhere', str(fake)) == {'/nowhere/file'}
    (fake / '12' / 'fdinfo' / '3').write_text('pos:\t0\n')
    assert _open_files.open_flags(str(fake / '12' / 'fd' / '3')) is None
    assert _open_files.open_for_writing('/nowhere', str(fake)) == set()
