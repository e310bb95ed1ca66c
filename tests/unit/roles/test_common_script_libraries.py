# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""common's tasks_from=script_libraries, run by Ansible on this machine into a temporary directory: the module_utils
beside a host script in their package layout, with root's ownership and the callers' modes; idempotent; --check
reports the change and writes nothing; the caller's handlers are notified exactly when something changed; bad input
fails before anything is written. The callers and the static rule: test_shipped_module_utils.py."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import stat

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ANSIBLE_PLAYBOOK, ROOT, common_entry_play, run_playbook

pytestmark = [
    pytest.mark.skipif(not os.path.exists(ANSIBLE_PLAYBOOK), reason='ansible-playbook not in this venv'),
    # The entry point makes its files root's, as on the hosts: only root can do that here.
    pytest.mark.skipif(os.geteuid() != 0, reason='the entry point chowns to root'),
]

# common is internal: the play imports the entry point through the test-only wrapper role (tests/support/roles).
PLAYBOOK = common_entry_play('script_libraries') + '''      vars:
        common_script_dir: "{{ script_dir }}"
        common_script_module_utils: "{{ names }}"
        common_script_notify: [Note that the libraries changed]
    - name: Write what it returned
      ansible.builtin.copy:
        dest: "%(dir)s/out.json"
        content: "{{ {'changed': __common_script_libraries is changed,
                      'changed_paths': __common_script_libraries.changed_paths} | to_json }}"
        mode: "0644"
      check_mode: false
  handlers:
    - name: Note that the libraries changed
      ansible.builtin.copy:
        dest: "%(dir)s/notified"
        content: "yes"
        mode: "0644"
      check_mode: false
'''
MODULE_UTILS = os.path.join(ROOT, 'plugins', 'module_utils')
PACKAGE = os.path.join('ansible_collections', 'gpuops', 'gpu_server', 'plugins', 'module_utils')


def run(tmp_path, script_dir, names, *args):
    """(process, the returned value or None, whether the handler ran) of one run of PLAYBOOK."""
    for name in ('out.json', 'notified'):
        if (tmp_path / name).exists():
            (tmp_path / name).unlink()
    playbook = tmp_path / 'play.yml'
    playbook.write_text(PLAYBOOK % {'dir': tmp_path})
    proc = run_playbook(playbook, '-e', json.dumps({'script_dir': script_dir, 'names': names}), *args)
    out = tmp_path / 'out.json'
    return proc, (json.loads(out.read_text()) if out.exists() else None), (tmp_path / 'notified').exists()


def tree(top):
    """{relative path: (type, mode, uid, gid, bytes or None)} of everything under TOP, TOP included."""
    found = {}
    for base, dirs, files in os.walk(top):
        for name in [''] + dirs + files:
            path = os.path.join(base, name) if name else base
            if name == '' and base != top:
                continue
            st = os.lstat(path)
            content = None
            if stat.S_ISREG(st.st_mode):
                with open(path, 'rb') as f:
                    content = f.read()
            found[os.path.relpath(path, top)] = (
                stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, content)
    return found


def test_check_real_check_real(tmp_path):
    """changed, changed, unchanged, unchanged (the community.docker idiom), the handler on the first two only."""
    script_dir = str(tmp_path / 'lib' / 'gpuops-tool')
    names = ['_command.py', '_json_text.py']

    proc, got, notified = run(tmp_path, script_dir, names, '--check')
    assert proc.returncode == 0, proc.stdout
    assert got['changed'] and notified
    assert not os.path.exists(tmp_path / 'lib'), 'check mode wrote to the host'
    module_dir = os.path.join(script_dir, PACKAGE)
    assert got['changed_paths'][-2:] == [os.path.join(module_dir, name) for name in names]

    proc, got, notified = run(tmp_path, script_dir, names)
    assert proc.returncode == 0, proc.stdout
    assert got['changed'] and notified
    files = tree(script_dir)
    expected_dirs = {'.'} | {os.path.join(*PACKAGE.split(os.sep)[:n]) for n in range(1, 6)}
    assert {path for path, entry in files.items() if stat.S_ISDIR(entry[0])} == expected_dirs
    assert {path for path, entry in files.items() if stat.S_ISREG(entry[0])} == {os.path.join(PACKAGE, n) for n in names}
    for path, (kind, mode, uid, gid, content) in files.items():
        assert (uid, gid) == (0, 0), path
        assert mode == (0o755 if stat.S_ISDIR(kind) else 0o644), (path, oct(mode))
        if content is not None:
            with open(os.path.join(MODULE_UTILS, os.path.basename(path)), 'rb') as f:
                assert content == f.read(), path

    for args in (('--check',), ()):
        proc, got, notified = run(tmp_path, script_dir, names, *args)
        assert proc.returncode == 0, proc.stdout
        assert got == {'changed': False, 'changed_paths': []} and not notified, args
    assert tree(script_dir) == files


def test_a_changed_file_or_mode_is_put_back_and_notifies(tmp_path):
    script_dir = str(tmp_path / 'tool')
    names = ['_command.py']
    assert run(tmp_path, script_dir, names)[0].returncode == 0
    shipped = os.path.join(script_dir, PACKAGE, '_command.py')
    with open(shipped, 'a') as f:
        f.write('# edited on the host\n')
    os.chmod(os.path.join(script_dir, 'ansible_collections'), 0o700)
    proc, got, notified = run(tmp_path, script_dir, names)
    assert proc.returncode == 0, proc.stdout
    assert got['changed'] and notified
    assert sorted(got['changed_paths']) == sorted([os.path.join(script_dir, 'ansible_collections'), shipped])
    with open(shipped, 'rb') as f, open(os.path.join(MODULE_UTILS, '_command.py'), 'rb') as g:
        assert f.read() == g.read()
    assert stat.S_IMODE(os.stat(os.path.join(script_dir, 'ansible_collections')).st_mode) == 0o755


@pytest.mark.parametrize('script_dir, names, fragment', [
    ('{tmp}/tool', ['_command.py', '../../../etc/passwd'], "common_script_module_utils[1] is '../../../etc/passwd'"),
    ('{tmp}/tool', ['_command.py', '_missing.py'], 'common_script_module_utils[1]: _missing.py is not a file'),
    ('relative/tool', ['_command.py'], 'must be an absolute, normalised path'),
])
def test_bad_input_fails_before_anything_is_written(tmp_path, script_dir, names, fragment):
    # Every class of bad input: tests/unit/plugins/filter/test_script_libraries.py; here, that the role fails on it.
    proc, got, notified = run(tmp_path, script_dir.format(tmp=tmp_path), names)
    assert proc.returncode != 0
    assert fragment in proc.stdout, proc.stdout
    assert 'Traceback' not in proc.stdout
    assert not os.path.exists(tmp_path / 'tool') and not notified


def test_the_argument_spec_refuses_a_string_for_the_list(tmp_path):
    proc, got, notified = run(tmp_path, str(tmp_path / 'tool'), '_command.py')
    assert proc.returncode != 0
    assert 'common_script_module_utils' in proc.stdout, proc.stdout
    assert not os.path.exists(tmp_path / 'tool')
