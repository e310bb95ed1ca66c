# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""config_files: several files and directories in one module run, with the checks copy and file make."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.gpuops.gpu_server.plugins.modules import config_files


@pytest.fixture
def run(run_module):
    def runner(files, check=False, diff=False):
        return run_module(config_files.main, dict(files=files, _ansible_check_mode=check, _ansible_diff=diff))
    return runner


def mode_of(path):
    return stat.S_IMODE(os.stat(str(path)).st_mode)


def leftovers(directory):
    return [n for n in os.listdir(str(directory)) if n.endswith('.gpuops')]


def test_writes_directories_and_files_in_order_then_changes_nothing(tmp_path, run):
    d = tmp_path / 'etc' / 'app' / 'conf.d'
    files = [
        dict(path=str(d), state='directory', mode='0750'),
        dict(path=str(d / 'a.conf'), content='a = 1\n', mode='0640'),
        dict(path=str(d / 'b.conf'), content='b = 2\n', mode='0600'),
    ]
    result = run(files)
    assert not result.failed, result
    assert result['changed'] is True
    assert result['changed_paths'] == [str(d), str(d / 'a.conf'), str(d / 'b.conf')]
    assert (d / 'a.conf').read_text() == 'a = 1\n'
    assert mode_of(d) == 0o750 and mode_of(d.parent) == 0o750   # a created parent gets the entry's attributes
    assert mode_of(d / 'a.conf') == 0o640 and mode_of(d / 'b.conf') == 0o600
    assert leftovers(d) == []

    again = run(files)
    assert not again.failed, again
    assert again['changed'] is False and again['changed_paths'] == []
    assert again['paths'] == [str(d), str(d / 'a.conf'), str(d / 'b.conf')]   # every entry handled, changed or not


def test_only_the_changed_file_is_reported_and_rewritten(tmp_path, run):
    a, b = tmp_path / 'a.conf', tmp_path / 'b.conf'
    a.write_text('same\n')
    b.write_text('old\n')
    os.chmod(str(a), 0o644)
    os.chmod(str(b), 0o644)
    inode_a = os.stat(str(a)).st_ino
    result = run([dict(path=str(a), content='same\n', mode='0644'), dict(path=str(b), content='new\n', mode='0644')])
    assert result['changed_paths'] == [str(b)]
    assert b.read_text() == 'new\n'
    assert os.stat(str(a)).st_ino == inode_a   # not rewritten


def test_a_drifted_mode_is_corrected_without_rewriting(tmp_path, run):
    a = tmp_path / 'secret'
    a.write_text('token\n')
    os.chmod(str(a), 0o644)
    result = run([dict(path=str(a), content='token\n', mode='0600')], diff=True)
    assert result['changed_paths'] == [str(a)]
    assert mode_of(a) == 0o600
    assert result['diff'][0]['before']['mode'] == '0644' and result['diff'][0]['after']['mode'] == '0600'


def test_a_replaced_file_keeps_its_mode_when_none_is_given(tmp_path, run):
    a = tmp_path / 'a.conf'
    a.write_text('old\n')
    os.chmod(str(a), 0o600)
    assert run([dict(path=str(a), content='new\n')])['changed'] is True
    assert mode_of(a) == 0o600 and a.read_text() == 'new\n'


def test_check_mode_changes_nothing_and_says_what_would_change(tmp_path, run):
    d = tmp_path / 'd'
    old = tmp_path / 'old.conf'
    old.write_text('x\n')
    result = run([dict(path=str(d), state='directory'), dict(path=str(d / 'f'), content='y\n'),
                  dict(path=str(old), state='absent')], check=True, diff=True)
    assert not result.failed, result
    assert result['changed_paths'] == [str(d), str(d / 'f'), str(old)]
    assert not d.exists() and old.exists()
    assert [x.get('after') for x in result['diff']][1] == 'y\n'


def test_a_failed_validate_leaves_the_old_file_and_no_temporary_file(tmp_path, run):
    a = tmp_path / 'a.conf'
    a.write_text('good\n')
    result = run([dict(path=str(a), content='bad\n', validate='grep -q good %s')])
    assert result.failed
    assert str(a) in result['msg'] and 'failed its check' in result['msg']
    assert a.read_text() == 'good\n'
    assert leftovers(tmp_path) == []


def test_validate_sees_the_new_content(tmp_path, run):
    a = tmp_path / 'a.conf'
    result = run([dict(path=str(a), content='good\n', validate='grep -q good %s')])
    assert not result.failed, result
    assert a.read_text() == 'good\n'


def test_validate_without_the_file_placeholder_is_refused_before_writing(tmp_path, run):
    a = tmp_path / 'a.conf'
    result = run([dict(path=str(a), content='x\n', validate='true')])
    assert result.failed and 'validate must contain %s' in result['msg']
    assert not a.exists()


def test_the_first_failure_stops_the_run_and_names_what_was_done(tmp_path, run):
    a = tmp_path / 'a.conf'
    result = run([dict(path=str(a), content='a\n'), dict(path=str(tmp_path / 'missing' / 'b'), content='b\n'),
                  dict(path=str(tmp_path / 'c'), content='c\n')])
    assert result.failed
    assert 'list it first with state=directory' in result['msg']
    assert result['changed_paths'] == [str(a)]
    assert not (tmp_path / 'c').exists()


@pytest.mark.parametrize('entry, message', [
    (dict(content='x'), 'the path must be absolute'),
    (dict(state='file'), 'content is required'),
])
def test_bad_entries_fail_with_a_message(tmp_path, run, entry, message):
    entry = dict(entry)
    entry['path'] = 'relative/path' if 'absolute' in message else str(tmp_path / 'f')
    result = run([entry])
    assert result.failed and message in result['msg']


def test_remove_takes_files_and_links_never_directories(tmp_path, run):
    f, link, d = tmp_path / 'f', tmp_path / 'link', tmp_path / 'd'
    f.write_text('x')
    link.symlink_to(f)
    d.mkdir()
    result = run([dict(path=str(link), state='absent'), dict(path=str(f), state='absent'),
                  dict(path=str(tmp_path / 'never'), state='absent')])
    assert result['changed_paths'] == [str(link), str(f)]
    assert not os.path.lexists(str(link)) and not f.exists()
    refused = run([dict(path=str(d), state='absent')])
    assert refused.failed and 'is a directory' in refused['msg'] and d.is_dir()


def test_something_else_in_the_way_is_left_untouched(tmp_path, run):
    d = tmp_path / 'conf'
    d.mkdir()
    assert 'is not a regular file' in run([dict(path=str(d), content='x')])['msg']
    f = tmp_path / 'file'
    f.write_text('x')
    assert 'is not a directory' in run([dict(path=str(f), state='directory')])['msg']
    assert f.read_text() == 'x'


def test_a_disabled_entry_is_left_out(tmp_path, run):
    f = tmp_path / 'f'
    result = run([dict(path=str(f), content='x', enabled=False), dict(path='relative', content='x', enabled=False)])
    assert not result.failed and result['changed'] is False and not f.exists()


def test_lines_are_edited_as_lineinfile_edits_them(tmp_path, run):
    f = tmp_path / 'login.defs'
    f.write_text('# PASS_MAX_DAYS\t99999 is the default\nPASS_MAX_DAYS\t99999\nUMASK\t\t022\r\nENCRYPT_METHOD SHA512')
    items = [dict(regexp=r'^\s*#?\s*PASS_MAX_DAYS\s', line='PASS_MAX_DAYS\t365'),   # last match replaced
             dict(regexp=r'^\s*UMASK\s', line='UMASK\t\t027'),                      # its line ending kept
             dict(regexp=r'^\s*#?\s*SHA_CRYPT_MIN_ROUNDS\s', line='SHA_CRYPT_MIN_ROUNDS\t5000'),  # appended
             dict(regexp=r'^NOMATCH', line='ENCRYPT_METHOD SHA512')]                # exact line there: kept
    result = run([dict(path=str(f), state='lines', lines=items)], diff=True)
    assert not result.failed, result
    assert f.read_bytes() == (b'# PASS_MAX_DAYS\t99999 is the default\nPASS_MAX_DAYS\t365\nUMASK\t\t027\r\n'
                              b'ENCRYPT_METHOD SHA512\nSHA_CRYPT_MIN_ROUNDS\t5000\n')
    assert 'PASS_MAX_DAYS\t365' in result['diff'][0]['after']
    assert run([dict(path=str(f), state='lines', lines=items)])['changed'] is False


def test_lines_need_an_existing_file_and_a_valid_regexp(tmp_path, run):
    missing = run([dict(path=str(tmp_path / 'none'), state='lines', lines=[dict(regexp='a', line='a')])])
    assert missing.failed and 'does not exist' in missing['msg'] and not (tmp_path / 'none').exists()
    f = tmp_path / 'f'
    f.write_text('x\n')
    bad = run([dict(path=str(f), state='lines', lines=[dict(regexp='(', line='a')])])
    assert bad.failed and 'not a regular expression' in bad['msg'] and f.read_text() == 'x\n'


def test_lines_are_edited_in_a_links_target(tmp_path, run):
    target, link = tmp_path / 'real.conf', tmp_path / 'link.conf'
    target.write_text('a = 1\n')
    link.symlink_to(target)
    assert run([dict(path=str(link), state='lines', lines=[dict(regexp='^a ', line='a = 2')])])['changed'] is True
    assert link.is_symlink() and target.read_text() == 'a = 2\n'


def test_settings_become_lines_in_the_given_format(tmp_path, run):
    f = tmp_path / 'pwquality.conf'
    f.write_text('# minlen = 8\nminclass=1\n')
    result = run([dict(path=str(f), state='lines', settings={'minlen': 14, 'minclass': 4, 'dcredit': -1})])
    assert result['changed'] is True
    assert f.read_text() == 'minlen = 14\nminclass = 4\ndcredit = -1\n'
    usb = tmp_path / 'usbguard-daemon.conf'
    usb.write_text('#ImplicitPolicyTarget=allow\n')
    run([dict(path=str(usb), state='lines', settings={'ImplicitPolicyTarget': 'block'}, setting_line='{key}={value}',
              setting_regexp=r'^#?\s*{key}=')])
    assert usb.read_text() == 'ImplicitPolicyTarget=block\n'


def test_validate_leaves_nothing_next_to_the_file(tmp_path, run):
    conf = tmp_path / 'jupyter_server_config.py'
    result = run([dict(path=str(conf), content='c = 1\n', validate='python3 -m py_compile %s')])
    assert not result.failed, result
    assert sorted(os.listdir(str(tmp_path))) == ['jupyter_server_config.py']   # no __pycache__ beside it
    bad = run([dict(path=str(conf), content='c = (\n', validate='python3 -m py_compile %s')])
    assert bad.failed and conf.read_text() == 'c = 1\n'


def test_links_in_a_directory_are_made_corrected_and_kept(tmp_path, run):
    d = tmp_path / 'cuda-11.8'
    d.mkdir()
    (d / 'include').symlink_to('/elsewhere')
    (d / 'bin').write_text('in the way')
    links = {'bin': '/usr/lib/nvidia-cuda-toolkit/bin', 'include': '/usr/include', 'nvvm': '/not/there/yet'}
    check = run([dict(path=str(d), state='directory', links=links)], check=True)
    assert check['changed_paths'] == [str(d / 'bin'), str(d / 'include'), str(d / 'nvvm')]
    assert not (d / 'bin').is_symlink() and os.readlink(str(d / 'include')) == '/elsewhere'
    result = run([dict(path=str(d), state='directory', links=links)])
    assert result['changed_paths'] == [str(d / 'bin'), str(d / 'include'), str(d / 'nvvm')]
    assert {n: os.readlink(str(d / n)) for n in links} == links
    assert leftovers(d) == [] and sorted(os.listdir(str(d))) == ['bin', 'include', 'nvvm']
    assert run([dict(path=str(d), state='directory', links=links)])['changed'] is False
    (d / 'sub').mkdir()
    refused = run([dict(path=str(d), state='directory', links={'sub': '/x'})])
    assert refused.failed and 'is a directory' in refused['msg']
