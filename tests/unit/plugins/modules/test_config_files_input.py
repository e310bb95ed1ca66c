# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""config_files with hostile or unusual input (issue 52, items 12 to 14): symbolic modes resolved as copy and file
resolve them, validate commands given an argument vector whatever the file is called, line breaks and booleans
refused, a file's path with a trailing '/', check mode failing where the real run fails, and every error naming the
path."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import shlex
import stat
import subprocess

import pytest

from ansible_collections.gpuops.gpu_server.plugins.modules import config_files


@pytest.fixture
def run(run_module):
    def runner(files, check=False, diff=False):
        return run_module(config_files.main, dict(files=files, _ansible_check_mode=check, _ansible_diff=diff))
    return runner


@pytest.fixture(autouse=True)
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode_of(path):
    return stat.S_IMODE(os.stat(str(path)).st_mode)


def chmod_oracle(tmp_path, mode, old_mode):
    """What chmod(1) makes of MODE on a file of mode OLD_MODE (a new file: the mode copy gives it, 0666 less the
    umask): the reference the module must agree with."""
    ref = tmp_path / 'oracle'
    ref.write_text('')
    os.chmod(str(ref), 0o666 & ~0o022 if old_mode is None else old_mode)
    subprocess.check_call(['chmod', mode, str(ref)])
    result = mode_of(ref)
    ref.unlink()
    return result


SYMBOLIC = ['u+x', 'a+x', 'go-w', 'u=rw,go=r', '=', '=r', 'u=rwx,g=rx,o=', 'o-rwx', 'g+s', 'a-w', 'u+x,g-r', 'a+X']


class TestSymbolicModes(object):
    """A symbolic mode is applied to the file being replaced (or to what copy gives a new one), never to the
    temporary file's 0600; the result agrees with chmod(1) and a second run changes nothing."""

    @pytest.mark.parametrize('old_mode', [None, 0o644, 0o600, 0o755, 0o640])
    @pytest.mark.parametrize('mode', SYMBOLIC)
    def test_new_or_replaced_content_gets_the_mode_chmod_gives(self, tmp_path, run, mode, old_mode):
        f = tmp_path / 'app.conf'
        if old_mode is not None:
            f.write_text('old\n')
            os.chmod(str(f), old_mode)
        expected = chmod_oracle(tmp_path, mode, old_mode)
        result = run([dict(path=str(f), content='new\n', mode=mode)])
        assert not result.failed, result
        assert f.read_text() == 'new\n' and mode_of(f) == expected, (mode, oct(old_mode or 0), oct(mode_of(f)))
        again = run([dict(path=str(f), content='new\n', mode=mode)])
        assert again['changed'] is False and mode_of(f) == expected

    @pytest.mark.parametrize('mode, old_mode, expected', [
        ('u+x', 0o644, 0o744),     # the issue's reproduction: 0700 before
        ('a+x', None, 0o755),      # 0711 before
        ('go-w', 0o666, 0o644),
        ('u=rw,go=r', 0o600, 0o644),
    ])
    def test_the_issues_cases_by_number(self, tmp_path, run, mode, old_mode, expected):
        f = tmp_path / 'f'
        if old_mode is not None:
            f.write_text('old\n')
            os.chmod(str(f), old_mode)
        assert not run([dict(path=str(f), content='new\n', mode=mode)]).failed
        assert mode_of(f) == expected

    def test_negative_control_the_temporary_files_mode_gives_other_answers(self, tmp_path):
        """The oracle tells the fixed behaviour from the old one (the mode applied to mkstemp's 0600)."""
        differ = [m for m in SYMBOLIC if chmod_oracle(tmp_path, m, 0o644) != chmod_oracle(tmp_path, m, 0o600)]
        assert {'u+x', 'a+x', 'a-w', 'u+x,g-r'} <= set(differ)

    @pytest.mark.parametrize('mode, expected', [('0644', 0o644), ('644', 0o644), ('0o640', 0o640), (0o600, 0o600),
                                                (420, 0o644), ('4755', 0o4755), ('0', 0)])
    def test_numeric_modes_as_strings_and_numbers(self, tmp_path, run, mode, expected):
        f = tmp_path / 'f'
        for old_mode in (None, 0o777):
            if old_mode is not None:
                os.chmod(str(f), old_mode)
            assert not run([dict(path=str(f), content='x%s\n' % old_mode, mode=mode)]).failed
            assert mode_of(f) == expected
            assert run([dict(path=str(f), content='x%s\n' % old_mode, mode=mode)])['changed'] is False

    def test_the_validate_copy_gets_the_resolved_mode(self, tmp_path, run):
        f = tmp_path / 'f'
        f.write_text('old\n')
        os.chmod(str(f), 0o640)
        check = 'python3 -c "import os, sys; sys.exit(os.stat(sys.argv[1]).st_mode & 0o777 != 0o740)" %s'
        assert not run([dict(path=str(f), content='new\n', mode='u+x', validate=check)]).failed
        assert mode_of(f) == 0o740

    def test_directories_and_unchanged_files_resolve_against_their_own_mode(self, tmp_path, run):
        d, f = tmp_path / 'd', tmp_path / 'same'
        f.write_text('same\n')
        os.chmod(str(f), 0o600)
        result = run([dict(path=str(d), state='directory', mode='u=rwx,go=rx'),
                      dict(path=str(f), content='same\n', mode='g+r')])
        assert not result.failed and mode_of(d) == 0o755 and mode_of(f) == 0o640

    @pytest.mark.parametrize('mode', ['u+q', 'rwx', '0999', '77777', 'x=r', '', ' ', 'u+x\n', -1, 0o10000, True,
                                      1.5, ['0644'], {'u': 'rw'}])
    @pytest.mark.parametrize('check', [False, True])
    def test_a_bad_mode_fails_before_anything_in_check_mode_too(self, tmp_path, run, mode, check):
        first, f = tmp_path / 'first', tmp_path / 'f'
        result = run([dict(path=str(first), content='a\n'), dict(path=str(f), content='x\n', mode=mode)], check=check)
        assert result.failed and str(f) in result['msg'] and 'mode' in result['msg'], result
        assert result['changed_paths'] == [] and not first.exists() and not f.exists()


NAMES = ["it's.conf", 'say "hi".conf', 'with space.conf', '100%.conf', '%s.conf', '%%.conf',
         '$NO_SUCH_GPUOPS_VARIABLE.conf',
         '${x}.conf', 'semi;colon&amp|pipe.conf', '~tilde.conf', 'back\\slash.conf', '-dash.conf', 'ünï ☃.conf',
         '*?[glob].conf', '`id`.conf', "$(touch pwned).conf"]


class TestValidate(object):
    """validate's %s becomes the checked copy's path as one argument, whatever the file is called."""

    @pytest.mark.parametrize('name', NAMES)
    def test_any_file_name_reaches_the_check_intact(self, tmp_path, run, name):
        f = tmp_path / name
        check = 'python3 -c "import os, sys; sys.exit(0 if os.path.basename(sys.argv[1]) == sys.argv[2] and ' \
                'open(sys.argv[1]).read() == sys.argv[3] else 3)" %%s %s good' % shlex.quote(name).replace('%', '%%')
        result = run([dict(path=str(f), content='good', validate=check)])
        assert not result.failed, result
        assert f.read_text() == 'good'
        bad = run([dict(path=str(f), content='bad', validate=check)])
        assert bad.failed and str(f) in bad['msg'] and 'failed its check' in bad['msg'] and f.read_text() == 'good'
        assert sorted(os.listdir(str(tmp_path))) == [name]   # nothing else made ($(touch pwned) never ran)

    def test_other_percent_signs_are_kept_and_a_double_one_is_one(self, tmp_path, run):
        f = tmp_path / 'f.conf'
        check = ('sh -c \'test "$0" = "%%" && test "$(date +%Y)" -gt 2000 && grep -q good "$1"\' %% %s')
        assert not run([dict(path=str(f), content='good\n', validate=check)]).failed
        assert run([dict(path=str(f), content='bad\n', validate=check)]).failed and f.read_text() == 'good\n'

    def test_the_placeholder_may_be_part_of_an_argument(self, tmp_path, run):
        f = tmp_path / 'with space.conf'
        check = 'python3 -c "import sys; sys.exit(open(sys.argv[1][len(\'--config=\'):]).read() != \'ok\')" --config=%s'
        assert not run([dict(path=str(f), content='ok', validate=check)]).failed

    def test_home_and_variables_in_the_command_itself_are_expanded_as_before(self, tmp_path, run, monkeypatch):
        monkeypatch.setenv('GPUOPS_CHECKER', 'grep')
        f = tmp_path / 'f.conf'   # (a $VARIABLE in the path itself is expanded by the path option, as in copy)
        assert not run([dict(path=str(f), content='good\n', validate='$GPUOPS_CHECKER -q good %s')]).failed
        assert f.read_text() == 'good\n'

    @pytest.mark.parametrize('command, message', [
        ('true', 'validate must contain %s'),
        ('echo %%s', 'validate must contain %s'),
        ('', 'validate must contain %s'),
        ('grep "unclosed %s', 'is not a command line'),
    ])
    @pytest.mark.parametrize('check', [False, True])
    def test_a_command_without_the_file_or_unbalanced_quotes_is_refused(self, tmp_path, run, command, message, check):
        f = tmp_path / 'f'
        result = run([dict(path=str(f), content='x\n', validate=command)], check=check)
        assert result.failed and message in result['msg'] and str(f) in result['msg']
        assert not f.exists()


LINE_BREAKS = ['\n', '\r', '\r\n', '\x0b', '\x0c', '\x1c', '\x1d', '\x1e', '\x85', '\u2028', '\u2029']


class TestLineBreaks(object):
    """A line, a setting or a path holding a line break is refused before anything changes, naming the path and the
    entry: it would be written as two lines and appended again on every run."""

    @pytest.mark.parametrize('brk', LINE_BREAKS)
    @pytest.mark.parametrize('check', [False, True])
    def test_lines_and_settings_with_a_line_break_are_refused(self, tmp_path, run, brk, check):
        f = tmp_path / 'login.defs'
        f.write_text('UMASK 022\n')
        cases = [
            (dict(lines=[dict(regexp='^UMASK', line='UMASK 027'), dict(regexp='^X', line='X 1%sPermitRootLogin yes'
                                                                       % brk)]), 'lines[1].line'),
            (dict(settings={'UMASK': '027%sENCRYPT_METHOD MD5' % brk}), "settings['UMASK']"),
            (dict(settings={'UM%sASK' % brk: '027'}), 'the key of settings'),
            (dict(settings={'UMASK': '027'}, setting_line='{key} {value}%s' % brk), 'setting_line'),
        ]
        for extra, entry_name in cases:
            entry = dict(path=str(f), state='lines')
            entry.update(extra)
            result = run([entry], check=check)
            assert result.failed and str(f) in result['msg'] and entry_name in result['msg'], result
            assert 'line break' in result['msg'] and result['changed_paths'] == []
            assert f.read_text() == 'UMASK 022\n'

    @pytest.mark.parametrize('brk', ['\n', '\r', '\u2028'])
    def test_a_path_with_a_line_break_is_refused(self, tmp_path, run, brk):
        name = 'a%sb' % brk
        result = run([dict(path=str(tmp_path / name), content='x\n')])
        assert result.failed and 'line break' in result['msg'] and repr(str(tmp_path / name)) in result['msg']
        assert os.listdir(str(tmp_path)) == []

    def test_negative_control_without_the_refusal_the_line_is_appended_on_every_run(self, tmp_path, run, monkeypatch):
        """What the refusal guards: the old module wrote the extra line and appended it again on the next run."""
        monkeypatch.setattr(config_files, 'line_break_in', lambda text: None)
        f = tmp_path / 'sshd_config'
        f.write_text('Port 22\n')
        entry = dict(path=str(f), state='lines',
                     lines=[dict(regexp='^Banner', line='Banner none\nPermitRootLogin yes')])
        assert run([entry])['changed'] is True
        assert run([entry])['changed'] is True   # not idempotent
        assert f.read_text().count('PermitRootLogin yes') == 2

    def test_values_without_a_line_break_are_written_as_before(self, tmp_path, run):
        f = tmp_path / 'pwquality.conf'
        f.write_text('')
        settings = {'minlen': 14, 'dcredit': -1, 'ratio': 0.5, 'badwords': 'gpu cluster\tadmin', 'empty': ''}
        assert not run([dict(path=str(f), state='lines', settings=settings)]).failed
        assert f.read_text() == 'minlen = 14\ndcredit = -1\nratio = 0.5\nbadwords = gpu cluster\tadmin\nempty = \n'
        assert run([dict(path=str(f), state='lines', settings=settings)])['changed'] is False


class TestSettingValues(object):

    @pytest.mark.parametrize('value, message', [
        (True, 'is the boolean True'), (False, 'is the boolean False'), (None, 'must be a string or a number'),
        ([1, 2], 'must be a string or a number'), ({'a': 1}, 'must be a string or a number'),
    ])
    @pytest.mark.parametrize('check', [False, True])
    def test_booleans_and_non_scalars_are_refused(self, tmp_path, run, value, message, check):
        f = tmp_path / 'login.defs'
        f.write_text('FAILLOG_ENAB no\n')
        result = run([dict(path=str(f), state='lines', settings={'FAILLOG_ENAB': value}, setting_line='{key} {value}',
                           setting_regexp='^#?{key}\\s')], check=check)
        assert result.failed and message in result['msg'] and str(f) in result['msg']
        assert 'FAILLOG_ENAB' in result['msg']
        assert f.read_text() == 'FAILLOG_ENAB no\n'

    def test_the_word_the_file_wants_is_written_as_given(self, tmp_path, run):
        f = tmp_path / 'login.defs'
        f.write_text('FAILLOG_ENAB no\n')
        assert not run([dict(path=str(f), state='lines', settings={'FAILLOG_ENAB': 'yes'}, setting_line='{key} {value}',
                             setting_regexp='^#?{key}\\s')]).failed
        assert f.read_text() == 'FAILLOG_ENAB yes\n'

    @pytest.mark.parametrize('key', ['', ' ', '\t'])
    def test_a_blank_key_is_refused(self, tmp_path, run, key):
        f = tmp_path / 'f'
        f.write_text('a = 1\n')
        result = run([dict(path=str(f), state='lines', settings={key: '1'})])
        assert result.failed and 'blank key' in result['msg'] and f.read_text() == 'a = 1\n'


@pytest.mark.parametrize('links, message', [
    ({'../escape': '/x'}, 'must name a link in the directory itself'),
    ({'a/b': '/x'}, 'must name a link in the directory itself'),
    ({'..': '/x'}, 'must name a link in the directory itself'),
    ({'bin\n': '/x'}, 'must name a link in the directory itself'),
    ({'bin': '/usr/bin\n'}, 'must be a path without line breaks'),
    ({'bin': ''}, 'must be a path without line breaks'),
])
def test_link_names_that_leave_the_directory_or_break_lines_are_refused(tmp_path, run, links, message):
    d = tmp_path / 'cuda'
    d.mkdir()
    result = run([dict(path=str(d), state='directory', links=links)])
    assert result.failed and message in result['msg'] and str(d) in result['msg']
    assert os.listdir(str(d)) == [] and sorted(os.listdir(str(tmp_path))) == ['cuda']


class TestTrailingSlash(object):

    @pytest.mark.parametrize('state, extra', [('absent', {}), ('file', {'content': 'x'}),
                                              ('lines', {'lines': [dict(regexp='^a', line='a')]})])
    @pytest.mark.parametrize('check', [False, True])
    def test_a_file_named_with_a_trailing_slash_is_refused(self, tmp_path, run, state, extra, check):
        f = tmp_path / 'conf'
        f.write_text('a\n')
        entry = dict(path=str(f) + '/', state=state)
        entry.update(extra)
        result = run([entry], check=check)
        assert result.failed and 'ends with "/"' in result['msg'] and str(f) in result['msg'], result
        assert f.read_text() == 'a\n'

    def test_a_directory_may_be_named_with_a_trailing_slash(self, tmp_path, run):
        d = tmp_path / 'conf.d'
        assert run([dict(path=str(d) + '/', state='directory', mode='0750')])['changed'] is True
        assert d.is_dir() and mode_of(d) == 0o750
        assert run([dict(path=str(d) + '/', state='directory', mode='0750')])['changed'] is False


class TestCheckModePredictsFailures(object):
    """Check mode fails where the real run would, for everything the entries themselves decide."""

    @pytest.mark.parametrize('entry', [
        dict(content='x', mode='u+q'),
        dict(content='x', validate='true'),
        dict(state='lines', lines=[dict(regexp='^a', line='a\nb')]),
        dict(state='lines', settings={'a': True}),
        dict(state='absent', path_suffix='/'),
    ])
    def test_same_failure_in_check_mode_and_for_real(self, tmp_path, run, entry):
        entry = dict(entry)
        f = tmp_path / 'f'
        f.write_text('a\n')
        entry['path'] = str(f) + entry.pop('path_suffix', '')
        check = run([entry], check=True)
        real = run([entry])
        assert check.failed and real.failed and check['msg'] == real['msg']
        assert f.read_text() == 'a\n'

    @pytest.mark.parametrize('what', ['owner', 'group'])
    def test_an_unknown_owner_fails_naming_the_path_before_anything_is_made(self, tmp_path, run, what):
        d = tmp_path / 'd'
        result = run([dict(path=str(d), state='directory', **{what: 'no-such-gpuops-name'})])
        assert result.failed and str(d) in result['msg'] and "the %s 'no-such-gpuops-name'" % what in result['msg']
        assert not d.exists()
        f = tmp_path / 'f'
        f.write_text('x')
        for check in (True, False):   # an existing file: check mode knows too
            result = run([dict(path=str(f), content='y', **{what: 'no-such-gpuops-name'})], check=check)
            assert result.failed and str(f) in result['msg'] and f.read_text() == 'x'


def test_a_system_error_names_the_path(tmp_path, run, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(28, 'No space left on device')
    monkeypatch.setattr(config_files.tempfile, 'mkstemp', full)
    f = tmp_path / 'f'
    result = run([dict(path=str(f), content='x')])
    assert result.failed and result['msg'].startswith(str(f) + ': ') and 'No space left' in result['msg']
