# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Issue 54: the nine places where nvidia_kernels runs a command and handles its failure, one by one.

Each case breaks one command of a run that reaches all of them (a command that cannot answer: CommandTimeout; or an
exit code), and asserts the message or the result that place gave before its error handling became one helper
(written and passing against the nine hand-written copies first)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command
from ansible_collections.gpuops.gpu_server.plugins.modules import nvidia_kernels
from ansible_collections.gpuops.gpu_server.tests.unit.plugins.modules.test_nvidia_kernels import Fake, noble_image

GENERIC = '6.8.0-149-generic'
PREBUILT = 'linux-modules-nvidia-580-server-6.8.0-149-generic'
# Which command each case breaks: a substring of its argv joined with blanks.
MOKUTIL = 'mokutil --test-key'
MODINFO_NVIDIA = '-k %s nvidia' % GENERIC
MODINFO_NOVA = '-k 6.8.0-1046-azure-fde nova_core'
UNMKINITRAMFS = 'unmkinitramfs'
INSTALLED = '${Version}'
MADISON = 'apt-cache -o Dir=ROOT madison'
CONTROL_INSTALLED = '/var/lib/dpkg -s '
CONTROL_CANDIDATES = 'show --no-all-versions'
PKGNAMES = 'pkgnames'
IMAGES = '${Depends}'


class Breaker(object):
    """Wraps _command.run: the first call whose argv holds ``needle`` raises CommandTimeout (``error``) or returns
    ``answer``; later calls go through (a second Breaker wraps the first, whose call is spent)."""

    def __init__(self, monkeypatch, root, needle, error=False, answer=None):
        self.needle = needle.replace('ROOT', str(root))
        self.error, self.answer, self.argv = error, answer, None
        real = _command.run

        def run(argv, *args, **kwargs):
            if self.argv is None and self.needle in ' '.join(str(a) for a in argv):
                self.argv = list(argv)
                if self.error:
                    raise _command.CommandTimeout(argv, 7)
                return self.answer
            return real(argv, *args, **kwargs)
        monkeypatch.setattr(_command, 'run', run)

    def timeout_text(self):
        return str(_command.CommandTimeout(self.argv, 7))

    def failure_text(self):
        rc, out, err = self.answer
        return _command.failure_message(self.argv, rc, err, out)


@pytest.fixture
def noble(tmp_path, monkeypatch):
    """The image of test_nvidia_kernels with a prebuilt module to judge and Secure Boot asked: one run reaches all nine
    places."""
    fake = Fake(tmp_path, monkeypatch)
    noble_image(fake)
    (fake.fake / 'show').write_text(
        'Package: %s\nVersion: 6.8.0-149.149\nDepends: nvidia-kernel-common-580-server (>= 580.178.04)\n' % PREBUILT)
    certificate = tmp_path / 'mok.pub'
    certificate.write_bytes(b'0\x82')
    mokutil = fake.bin / 'mokutil'
    mokutil.write_text('#!/bin/sh\necho "$2 is not enrolled"\n')
    mokutil.chmod(0o755)
    fake.certificate = str(certificate)
    return fake


def run(fake, run_module):
    return run_module(nvidia_kernels.main, fake.args(secure_boot=True, mok_certificate=fake.certificate))


def by_release(result):
    return dict((k['release'], k) for k in result['kernels'])


def test_the_unbroken_run_reaches_every_place(noble, run_module, monkeypatch):
    """The control: every command the cases break runs in the unbroken run, and it succeeds."""
    seen = []
    real = _command.run

    def spy(argv, *args, **kwargs):
        seen.append(' '.join(str(a) for a in argv))
        return real(argv, *args, **kwargs)
    monkeypatch.setattr(_command, 'run', spy)
    result = run(noble, run_module)
    assert not result.failed, result.get('msg')
    for needle in (MOKUTIL, MODINFO_NVIDIA, MODINFO_NOVA, UNMKINITRAMFS, INSTALLED, MADISON, CONTROL_INSTALLED,
                   CONTROL_CANDIDATES, PKGNAMES, IMAGES):
        needle = needle.replace('ROOT', str(noble.root))
        assert any(needle in call for call in seen), (needle, seen)


# The places that end the module when their command cannot answer: the needle, and the words before the error.
FATAL = [
    (MOKUTIL, 'asking mokutil whether CERT is enrolled'),
    (MODINFO_NVIDIA, 'reading the NVIDIA module of kernel %s' % GENERIC),
    (INSTALLED, 'reading the installed kernel packages'),
    (MADISON, 'reading the versions of linux-headers-azure-fde, linux-modules-nvidia-580-server-generic'),
    (CONTROL_INSTALLED, 'reading the control data of %s, nvidia-kernel-common-580-server' % PREBUILT),
    (CONTROL_CANDIDATES, 'reading the control data of %s' % PREBUILT),
    (PKGNAMES, 'reading the package names apt knows'),
    (IMAGES, 'reading the installed linux-image packages'),
]


@pytest.mark.parametrize('needle,what', FATAL, ids=[w.split(' ', 2)[1] + '-' + n.strip(' -/$') for n, w in FATAL])
def test_a_command_that_cannot_answer_fails_naming_what_was_read(noble, run_module, monkeypatch, needle, what):
    breaker = Breaker(monkeypatch, noble.root, needle, error=True)
    result = run(noble, run_module)
    assert breaker.argv is not None, needle
    assert result.failed
    assert result['msg'] == '%s: %s' % (what.replace('CERT', noble.certificate), breaker.timeout_text())


# The places that read the exit code: the needle, and an exit code that fails the module (with the command's own
# failure_message; the codes dpkg-query exits with as an answer are the tests below).
EXIT_CODES = [(INSTALLED, 2), (MADISON, 100), (CONTROL_INSTALLED, 2), (CONTROL_CANDIDATES, 1), (PKGNAMES, 100),
              (IMAGES, 2)]


@pytest.mark.parametrize('needle,rc', EXIT_CODES, ids=[n.strip(' -/$') for n, _rc in EXIT_CODES])
def test_an_exit_code_fails_with_the_command_its_code_and_stderr(noble, run_module, monkeypatch, needle, rc):
    breaker = Breaker(monkeypatch, noble.root, needle, answer=(rc, 'half an answer', 'E: it broke'))
    result = run(noble, run_module)
    assert result.failed and result['msg'] == breaker.failure_text()
    assert result['msg'].endswith('exit code %d: E: it broke' % rc)


@pytest.mark.parametrize('needle', [INSTALLED, CONTROL_INSTALLED])
def test_dpkg_query_exit_code_1_is_an_answer(noble, run_module, monkeypatch, needle):
    """dpkg-query exits 1 when a pattern or a name matches nothing installed: what it printed is still the answer."""
    breaker = Breaker(monkeypatch, noble.root, needle, answer=(1, '', 'dpkg-query: no packages found'))
    result = run(noble, run_module)
    assert breaker.argv is not None
    assert not result.failed, result.get('msg')


def test_no_linux_image_package_is_an_empty_answer_and_another_exit_1_fails(noble, run_module, monkeypatch):
    Breaker(monkeypatch, noble.root, IMAGES, answer=(1, '', 'dpkg-query: no packages found matching linux-image-*'))
    result = run(noble, run_module)
    assert not result.failed, result.get('msg')
    breaker = Breaker(monkeypatch, noble.root, IMAGES, answer=(1, '', 'dpkg-query: error: cannot open status'))
    result = run(noble, run_module)
    assert result.failed and result['msg'] == breaker.failure_text()


def test_mokutil_exit_code_is_not_judged(noble, run_module, monkeypatch):
    """mokutil --test-key exits non-zero both for "not enrolled" and errors: its words are the answer."""
    Breaker(monkeypatch, noble.root, MOKUTIL, answer=(1, '%s is not enrolled' % noble.certificate, ''))
    result = run(noble, run_module)
    assert not result.failed, result.get('msg')


def test_modinfo_that_cannot_answer_for_nova_core_leaves_it_unknown(noble, run_module, monkeypatch):
    breaker = Breaker(monkeypatch, noble.root, MODINFO_NOVA, error=True)
    result = run(noble, run_module)
    assert breaker.argv is not None and not result.failed, result.get('msg')
    assert by_release(result)['6.8.0-1046-azure-fde']['nova_core'] is None
    Breaker(monkeypatch, noble.root, MODINFO_NOVA, answer=(1, '', 'modinfo: ERROR: Module nova_core not found.'))
    assert by_release(run(noble, run_module))['6.8.0-1046-azure-fde']['nova_core'] is False


def test_modinfo_exit_code_means_no_module(noble, run_module, monkeypatch):
    Breaker(monkeypatch, noble.root, MODINFO_NVIDIA, answer=(1, 'filename: /x.ko\n', 'modinfo: ERROR'))
    result = run(noble, run_module)
    assert not result.failed and by_release(result)[GENERIC]['module'] == {}


@pytest.mark.parametrize('error', [True, False], ids=['cannot-answer', 'exit-code'])
def test_unmkinitramfs_failure_makes_the_initramfs_unreadable(noble, run_module, monkeypatch, error):
    breaker = Breaker(monkeypatch, noble.root, UNMKINITRAMFS, error=error, answer=(2, '', 'cpio: premature end'))
    result = run(noble, run_module)
    assert not result.failed, result.get('msg')
    kernel = by_release(result)[breaker.argv[1].rsplit('initrd.img-', 1)[1]]
    expected = breaker.timeout_text() if error else breaker.failure_text()
    assert (kernel['initramfs_blacklist'], kernel['initramfs_reason']) == ('unreadable', expected)
