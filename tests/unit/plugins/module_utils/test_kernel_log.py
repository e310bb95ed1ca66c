# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_log as kl
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import load_yaml, make_executable, read_fixture

EXPECTED = load_yaml('kernel_log', 'expected.yml')


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_parse_recorded_log(name):
    events = kl.parse(read_fixture('kernel_log', name))
    assert len(events) == len(EXPECTED[name])
    for got, want in zip(events, EXPECTED[name]):
        for key, value in want.items():
            assert got[key] == value, (name, key, got)


@pytest.mark.parametrize('code,status', [(48, 'fail'), (64, 'fail'), (74, 'fail'), (79, 'fail'), (92, 'fail'),
                                         (94, 'fail'), (95, 'fail'), (119, 'fail'), (120, 'fail'), (61, 'fail'),
                                         (62, 'fail'), (13, 'warn'), (31, 'warn'), (43, 'warn'), (45, 'warn')])
def test_classification(code, status):
    assert kl.classify(code)[0] == status


def test_unknown_code_is_warn_and_named():
    status, description = kl.classify(4242)
    assert status == 'warn'
    assert '4242' in description


@pytest.mark.parametrize('event_pci,bus_id,match', [('0000:3b:00', '0000:3b:00.0', True),
                                                    ('0000:3b:00', '0000:3c:00.0', False),
                                                    ('0000:3b:00', None, False)])
def test_matches_gpu(event_pci, bus_id, match):
    assert kl.matches_gpu(event_pci, bus_id) is match


# Issue 52: normalize_pci('3b:00.0') raised (IndexError). Every spelling of one device, and what is none.
@pytest.mark.parametrize('text,device', [
    ('0000:3b:00', '0000:3b:00'), ('0000:3B:00', '0000:3b:00'), ('0000:3b:00.0', '0000:3b:00'),
    ('3b:00.0', '0000:3b:00'), ('3B:00', '0000:3b:00'), ('3b:1f.7', '0000:3b:1f'),
    ('00000000:3B:00.0', '0000:3b:00'), ('00000000:3b:00', '0000:3b:00'),       # nvidia-smi's 8-digit domain
    ('0001:3b:00.0', '0001:3b:00'), ('ffff:ff:1f.7', 'ffff:ff:1f'),              # 16-bit domains
    ('10000:e1:00.0', '10000:e1:00'), ('0001abcd:00:00.0', '1abcd:00:00'),        # VMD domains above 16 bits
    (' 0000:3b:00.0\n', '0000:3b:00'), ('\t3b:00.0\r\n', '0000:3b:00'),          # blanks around are dropped
])
def test_normalize_pci_reads_every_spelling(text, device):
    assert kl.normalize_pci(text) == device
    assert kl.matches_gpu(device, text) and kl.matches_gpu(text, '0000:%s.3' % device[5:]) is (device[:4] == '0000')


@pytest.mark.parametrize('junk', [
    '', ' ', '3b', '3b:00:00:00', '0000:3b:00.8', '0000:3b:20.0', '0000:3b:ff', '000:3b:00.0', '123456789:3b:00.0',
    '0000:3b:0.0', '0000:3b:000', '0000:3g:00', '0000-3b-00.0', '0000:3b:00.0 x', '0000:3b :00', '0000:3b:00.',
    '0000:3b:00.0\n0000:af:00.0', 'PCI:0000:3b:00', '\u0660\u0660\u0660\u0660:3b:00', '\uff13b:00.0', '0x3b:00.0',
    '0000:+3:00', None, 3, b'0000:3b:00', ['0000:3b:00'], 0x3b00,
], ids=repr)
def test_normalize_pci_refuses_what_is_no_pci_address(junk):
    with pytest.raises(kl.PciAddressError) as e:
        kl.normalize_pci(junk)
    assert 'PCI address' in str(e.value) and '\n' not in str(e.value)
    assert kl.matches_gpu(junk, '0000:3b:00.0') is False and kl.matches_gpu('0000:3b:00', junk) is False


def test_pci_address_error_is_a_value_error_the_callers_catch():
    assert issubclass(kl.PciAddressError, ValueError)
    assert kl.parse_pci('00000000:3B:00.0') == (0, 0x3b, 0, 0) and kl.parse_pci('3b:01') == (0, 0x3b, 1, None)


def test_an_xid_is_tied_to_the_gpu_nvidia_smi_names_with_its_8_digit_domain():
    """The event says 0000:3b:00; nvidia-smi's own spelling of the GPU is 00000000:3B:00.0: the same device."""
    events = kl.parse('NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.')
    assert kl.matches_gpu(events[0]['pci'], '00000000:3B:00.0')
    assert not kl.matches_gpu(events[0]['pci'], '00000000:3C:00.0')
    assert not kl.matches_gpu(events[0]['pci'], '00000001:3B:00.0')


def test_an_xid_line_with_no_pci_address_is_kept_host_wide():
    events = kl.parse('NVRM: Xid (PCI:0000:3b:ff): 79, pid=1, name=x, GPU has fallen off the bus.')
    assert len(events) == 1 and events[0]['pci'] is None and events[0]['code'] == 79


def test_negative_control_the_old_normalize_pci_raised_on_the_short_form():
    def old_normalize_pci(pci):
        parts = pci.lower().split(':')
        domain = '%04x' % int(parts[0], 16)
        device = parts[2].split('.')[0]
        return '%s:%s:%s' % (domain, parts[1], device)
    with pytest.raises(IndexError):
        old_normalize_pci('3b:00.0')
    assert old_normalize_pci('0000:3b:00.0 x') == '0000:3b:00'            # and took junk after it as the device
    assert old_normalize_pci('0000:3b:zz') == '0000:3b:zz'
    assert not '00000000:3b:00.0'.startswith('0000:3b:00' + '.')           # the old matches_gpu's prefix test


def test_read_prefers_journalctl(tmp_path):
    journal = make_executable(tmp_path, 'journalctl', stdout_file=str(tmp_path / 'x'), rc=0)
    (tmp_path / 'x').write_text(read_fixture('kernel_log', 'journal_short_iso.txt'))
    dmesg = make_executable(tmp_path, 'dmesg', stdout='should not be read', rc=0)
    text, source, error = kl.read(journal, dmesg)
    assert (source, error) == ('journalctl', None)
    assert len(kl.parse(text)) == 3


def test_read_passes_since_or_current_boot():
    calls = []

    def runner(argv, timeout=None):
        calls.append(argv)
        return 0, '2025-02-23T16:24:18+0000 gpu01 kernel: hello\n', ''
    kl.read('/bin/journalctl', None, since='-1h', runner=runner)
    kl.read('/bin/journalctl', None, runner=runner)
    assert calls[0][-2:] == ['--since', '-1h']
    assert calls[1][-2:] == ['-b', '0']
    assert all(c[:2] == ['/bin/journalctl', '-k'] for c in calls)


def test_read_falls_back_to_dmesg(tmp_path):
    journal = make_executable(tmp_path, 'journalctl', stderr='No journal files were found.\n', rc=0)
    dmesg = make_executable(tmp_path, 'dmesg', stdout_file=str(tmp_path / 'd'), rc=0)
    (tmp_path / 'd').write_text(read_fixture('kernel_log', 'dmesg_raw.txt'))
    text, source, error = kl.read(journal, dmesg)
    assert source == 'dmesg' and error is None
    assert [e['code'] for e in kl.parse(text)] == [13, 13, 43, 79]


def _fake_readers(tmp_path, journal_out='', journal_err='', journal_rc=0):
    (tmp_path / 'j').write_text(journal_out)
    journal = make_executable(tmp_path, 'journalctl', stdout_file=str(tmp_path / 'j'), stderr=journal_err,
                              rc=journal_rc)
    (tmp_path / 'd').write_text(read_fixture('kernel_log', 'dmesg_raw.txt'))
    dmesg = make_executable(tmp_path, 'dmesg', stdout_file=str(tmp_path / 'd'), rc=0)
    return journal, dmesg


def test_read_empty_journal_reads_dmesg(tmp_path):
    """journald keeps no kernel messages: journalctl -q exits 0 and prints nothing; dmesg holds the Xids."""
    journal, dmesg = _fake_readers(tmp_path)
    text, source, error = kl.read(journal, dmesg)
    assert (source, error) == ('dmesg', None)
    assert [e['code'] for e in kl.parse(text)] == [13, 13, 43, 79]


def test_read_empty_journal_and_unreadable_dmesg_is_an_error(tmp_path):
    journal, _dmesg = _fake_readers(tmp_path)
    dmesg = make_executable(tmp_path, 'dmesg', stderr='dmesg: read kernel buffer failed: Operation not permitted\n',
                            rc=1)
    text, source, error = kl.read(journal, dmesg)
    assert text is None and source is None
    assert 'journalctl holds no kernel messages of the current boot' in error
    assert 'Operation not permitted' in error


def test_read_since_with_nothing_new_keeps_the_journal():
    """With --since, an empty answer is believed when the journal holds kernel messages of this boot."""
    calls = []

    def runner(argv, timeout=None):
        calls.append(argv)
        if '--since' in argv:
            return 0, '', ''
        if argv[0].endswith('journalctl'):
            return 0, '2025-02-23T16:24:18+0000 gpu01 kernel: Linux version 6.1\n', ''
        raise AssertionError('dmesg must not be read: %r' % (argv,))
    assert kl.read('/bin/journalctl', '/bin/dmesg', since='-1h', runner=runner) == ('', 'journalctl', None)
    assert calls[1][-4:] == ['-b', '0', '-n', '1']


def test_read_since_with_an_empty_journal_reads_dmesg(tmp_path):
    journal, dmesg = _fake_readers(tmp_path)
    text, source, error = kl.read(journal, dmesg, since='-1h')
    assert (source, error) == ('dmesg', None)
    assert len(kl.parse(text)) == 4


def test_read_bad_since_is_an_error(tmp_path):
    journal, dmesg = _fake_readers(tmp_path, journal_err='Failed to parse timestamp: not-a-time\n', journal_rc=1)
    with pytest.raises(kl.KernelLogError, match="kernel_log_since 'not-a-time' is not a time journalctl understands"):
        kl.read(journal, dmesg, since='not-a-time')


@pytest.mark.skipif(not os.path.exists('/usr/bin/journalctl'), reason='needs a real journalctl')
def test_read_bad_since_with_the_real_journalctl():
    with pytest.raises(kl.KernelLogError, match='Failed to parse timestamp'):
        kl.read('/usr/bin/journalctl', '/bin/true', since='not-a-time')


def test_read_reports_why_nothing_was_read(tmp_path):
    journal = make_executable(tmp_path, 'journalctl', stderr='Failed to get journal access: Permission denied\n', rc=1)
    dmesg = make_executable(tmp_path, 'dmesg', stderr='dmesg: read kernel buffer failed: Operation not permitted\n',
                            rc=1)
    text, source, error = kl.read(journal, dmesg)
    assert text is None and source is None
    assert 'exit code 1' in error and 'Permission denied' in error and 'Operation not permitted' in error


def test_read_with_no_tools():
    assert kl.read(None, None)[2] == 'neither journalctl nor dmesg was found'


def test_command_helper(tmp_path):
    exe = make_executable(tmp_path, 'tool', stdout='out', stderr='oops', rc=3)
    rc, out, err = _command.run([exe, 'a b'])
    assert (rc, out, err) == (3, 'out', 'oops')
    msg = _command.failure_message([exe, 'a b'], rc, err)
    assert msg == "Command '%s 'a b'' failed with exit code 3: oops" % exe


def test_command_forces_c_locale(tmp_path, monkeypatch):
    monkeypatch.setenv('LC_ALL', 'de_DE.UTF-8')
    rc, out, _err = _command.run(['sh', '-c', 'printf %s "$LC_ALL"'])
    assert (rc, out) == (0, 'C')


def test_command_timeout_kills(tmp_path):
    exe = make_executable(tmp_path, 'hang', sleep=30)
    with pytest.raises(_command.CommandTimeout, match='did not finish within 1 seconds'):
        _command.run([exe], timeout=1)


def test_command_not_found(tmp_path):
    with pytest.raises(_command.CommandNotFound):
        _command.run([str(tmp_path / 'missing')])


def test_command_refuses_a_string():
    with pytest.raises(TypeError):
        _command.run('ls -l')


# Issue 29: no kernel log text makes parse() raise.

def test_xid_code_of_more_than_4300_digits_is_an_unreadable_warning():
    """Issue 29: a 5000-digit Xid code raised ValueError (Python's int string-conversion limit)."""
    line = '[  12.5] NVRM: Xid (PCI:0000:3b:00): %s, pid=1, name=x, junk' % ('7' * 5000)
    events = kl.parse(line)
    assert len(events) == 1
    assert events[0]['code'] is None and events[0]['status'] == 'warn'
    assert events[0]['pci'] == '0000:3b:00' and events[0]['time'] == '12.5'
    assert 'could not be read' in events[0]['description']


@pytest.mark.parametrize('code', ['\u0667\u0669', '\uff17\uff19'])
def test_xid_code_in_non_ascii_digits_is_no_xid(code):
    """Issue 29: int() reads Arabic-Indic and fullwidth digits; a kernel never prints them."""
    assert kl.parse('NVRM: Xid (PCI:0000:3b:00): %s, pid=1, GPU has fallen off the bus.' % code) == []


@pytest.mark.parametrize('code,expected', [('000000000000079', 79), ('999999999', 999999999), ('1000000000', None)])
def test_xid_code_digits(code, expected):
    assert kl.parse('NVRM: Xid (PCI:0000:3b:00): %s, x' % code)[0]['code'] == expected


def test_xid_text_is_stripped_without_backtracking():
    line = 'NVRM: Xid (PCI:0000:3b:00): 79, ' + ' ' * 200000 + 'tail' + ' ' * 200000
    assert kl.parse(line)[0]['text'] == 'tail'


@pytest.mark.parametrize('text', [b'NVRM: Xid (PCI:0000:3b:00): 79, x\xff', None, ''])
def test_parse_reads_bytes_and_nothing(text):
    assert len(kl.parse(text)) == (1 if text else 0)


@pytest.mark.parametrize('text', [5, ['NVRM: Xid (PCI:0000:3b:00): 79'], {'a': 1}])
def test_parse_refuses_what_is_not_text(text):
    with pytest.raises(kl.KernelLogError, match='is text'):
        kl.parse(text)


# Issue 52: an Xid line's text was unbounded, and carried control characters into facts and reports.
XID = 'Feb 23 16:24:18 gpu01 kernel: NVRM: Xid (PCI:0000:3b:00): 79, '


@pytest.mark.parametrize('size', [kl.XID_TEXT_MAX - 1, kl.XID_TEXT_MAX, kl.XID_TEXT_MAX + 1, 5000, 4 * 1024 * 1024])
def test_an_xid_text_is_capped_with_a_mark_naming_what_was_cut(size):
    tail = ('pid=1, name=x, ' + 'A' * size)[:size]
    event = kl.parse(XID + tail)[0]
    if size <= kl.XID_TEXT_MAX:
        assert event['text'] == tail
    else:
        assert event['text'] == tail[:kl.XID_TEXT_MAX] + ' [... %d more characters]' % (size - kl.XID_TEXT_MAX)
    assert len(event['text']) <= kl.XID_TEXT_MAX + len(kl.TRUNCATED_MARK % size)
    assert len(event['line']) <= kl.XID_LINE_MAX + len(kl.TRUNCATED_MARK % (size + len(XID)))
    assert event['code'] == 79 and event['pci'] == '0000:3b:00' and event['host'] == 'gpu01'


def test_a_flood_of_huge_xid_lines_stays_bounded_per_event():
    """200 Xid lines of 100,000 characters each (20 MB of text went into the events before): each event holds at
    most the caps, about 1,600 characters, whatever the lines' length."""
    line = XID + 'x' * 100000
    events = kl.parse('\n'.join([line] * 200))
    assert len(events) == 200
    assert max(len(e['text']) + len(e['line']) for e in events) < kl.XID_TEXT_MAX + kl.XID_LINE_MAX + 80


CONTROLS = [chr(c) for c in range(0x20) if c not in (0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e)] + \
    ['\x7f'] + [chr(c) for c in range(0x80, 0xa0) if c != 0x85]


@pytest.mark.parametrize('char', CONTROLS, ids=lambda c: 'U+%04X' % ord(c))
def test_control_characters_are_dropped_from_the_text_and_line(char):
    event = kl.parse(XID + 'GPU has%s fallen\toff the bus.%s' % (char, char))[0]
    assert event['text'] == 'GPU has fallen off the bus.'
    assert char not in event['line'] and '\t' not in event['line']


@pytest.mark.parametrize('header,host', [
    ('Feb 23 16:24:18 gpu01 kernel: ', 'gpu01'), ('Feb 23 16:24:18 gpu-01.example kernel: ', 'gpu-01.example'),
    ('Feb 23 16:24:18 %s kernel: ' % ('h' * 253), 'h' * 253), ('Feb 23 16:24:18 %s kernel: ' % ('h' * 254), None),
    ('Feb 23 16:24:18 gpu\x1b[31m01 kernel: ', None), ('Feb 23 16:24:18 gpu\u202e01 kernel: ', None),
])
def test_the_host_is_a_bounded_printable_name(header, host):
    assert kl.parse(header + 'NVRM: Xid (PCI:0000:3b:00): 79, x')[0]['host'] == host


def test_negative_control_the_old_text_was_the_whole_tail():
    """The check above fails on the old text (the rest of the line, stripped): every character of it was kept."""
    tail = 'y' * 100000 + '\x1b[2J'
    m = kl._XID_RE.search(XID + tail)
    old_text = m.group('text').strip()
    assert len(old_text) == len(tail) and '\x1b' in old_text
    assert kl.bounded_text(tail, kl.XID_TEXT_MAX) != old_text
