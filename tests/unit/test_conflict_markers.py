# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""No file under version control holds a merge's conflict markers (a merge once left them in docs/architecture.md,
where no other check reads the table as a whole). reStructuredText's `=======` underlines are no markers: only the
two named ends, `<<<<<<< ` and `>>>>>>> `, are looked for."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARKER = re.compile(r'^(<{7}|>{7}) ', re.M)


def conflicted(paths, root=ROOT):
    found = []
    for path in paths:
        try:
            with open(os.path.join(root, path), encoding='utf-8') as f:
                text = f.read()
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue
        if MARKER.search(text):
            found.append(path)
    return found


def test_no_conflict_markers_in_tracked_files():
    listed = subprocess.run(['git', 'ls-files', '-z'], cwd=ROOT, capture_output=True, check=False)
    if listed.returncode != 0:
        import pytest
        pytest.skip('not a git checkout')
    paths = [p for p in listed.stdout.decode('utf-8').split('\0') if p]
    assert len(paths) > 100
    assert conflicted(paths) == []


def test_markers_are_found(tmp_path):
    """Negative control: a file with a conflict is reported; an RST underline is not."""
    (tmp_path / 'a.md').write_text('x\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> h/branch\n')
    (tmp_path / 'b.rst').write_text('Title\n=======\n')
    assert conflicted(['a.md', 'b.rst'], str(tmp_path)) == ['a.md']
