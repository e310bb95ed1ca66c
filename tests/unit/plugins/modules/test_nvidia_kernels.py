# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""nvidia_kernels against a fake image tree, with fake modinfo, unmkinitramfs, apt-cache and dpkg-query on PATH."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import stat
import tempfile

import pytest

from ansible.module_utils import basic

from ansible_collections.gpuops.gpu_server.plugins.modules import nvidia_kernels
from ansible_collections.gpuops.gpu_server.tests.unit.plugins.module_utils.test_kernels import (
    DPKG_QUERY_NOBLE, MODINFO_580_NOBLE, NOBLE_KNOWN)

BLACKLIST = b'blacklist nouveau\noptions nouveau modeset=0\n'
BLACKLIST_FILE = '/etc/modprobe.d/gpuops-blacklist-nouveau.conf'
NOVA = 'kernel/drivers/gpu/nova-core/nova_core.ko.zst: kernel/drivers/gpu/drm/drm.ko.zst\n'

# The fakes log their arguments, one line per call, to <fake>/calls.
FAKES = {
    # modinfo [-b ROOT] -k RELEASE NAME: prints <fake>/modinfo/RELEASE/NAME, else the error kmod prints.
    'modinfo': r'''
printf "%s\\n" "modinfo $*" >> "$FAKE/calls"
while [ $# -gt 2 ]; do
  case "$1" in -b) shift 2;; -k) release="$2"; shift 2;; *) shift;; esac
done
name="$1"
if [ -f "$FAKE/modinfo/$release/$name" ]; then cat "$FAKE/modinfo/$release/$name"; exit 0; fi
echo "modinfo: ERROR: Module $name not found." >&2
exit 1
''',
    # unmkinitramfs IMAGE DIR: the fake image holds the path of the tree to copy, or FAIL, or HANG.
    'unmkinitramfs': r'''
printf "%s\\n" "unmkinitramfs $*" >> "$FAKE/calls"
src="$(cat "$1")"
case "$src" in
  FAIL) echo "cpio: premature end of archive" >&2; exit 2;;
  HANG) exec sleep 30;;
esac
cp -R "$src"/. "$2"/
''',
    # apt-cache pkgnames, apt-cache madison NAMES (the versions offered for the flavour metapackages), or apt-cache
    # show --no-all-versions NAMES (the candidates' control data).
    'apt-cache': 'printf "%s\\n" "apt-cache $*" >> "$FAKE/calls"\n'
                 'case "$*" in *madison*) cat "$FAKE/madison";; *show*) cat "$FAKE/show";; *) cat "$FAKE/pkgnames";;'
                 ' esac\n',
    # dpkg-query with the Depends format (linux-image metapackages), the Version one (installed versions), or -s
    # NAMES (the installed packages' control data; exit 1 as dpkg-query does when one of them is not installed).
    'dpkg-query': 'printf "%s\\n" "dpkg-query $*" >> "$FAKE/calls"\n'
                  'case "$*" in *Version*) cat "$FAKE/dpkg-versions";; *" -s "*) cat "$FAKE/dpkg-status"; exit 1;;'
                  ' *) cat "$FAKE/dpkg";; esac\n',
}


class Fake(object):
    """A fake image tree at ``root`` and the fake commands' state under ``fake``."""

    def __init__(self, tmp_path, monkeypatch):
        self.root = tmp_path / 'root'
        self.fake = tmp_path / 'fake'
        self.bin = tmp_path / 'bin'
        self.tmp = tmp_path / 'tmp'
        for d in (self.root, self.fake, self.bin, self.tmp, self.root / 'boot', self.root / 'etc' / 'modprobe.d'):
            d.mkdir(parents=True, exist_ok=True)
        monkeypatch.setattr(tempfile, 'tempdir', str(self.tmp))
        for name, body in FAKES.items():
            path = self.bin / name
            path.write_text('#!/bin/sh\n' + body)
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
        monkeypatch.setenv('FAKE', str(self.fake))
        monkeypatch.setenv('PATH', '%s%s%s' % (self.bin, os.pathsep, os.environ.get('PATH', '')))
        (self.fake / 'calls').write_text('')
        (self.fake / 'pkgnames').write_text('\n'.join(sorted(NOBLE_KNOWN)) + '\n')
        (self.fake / 'dpkg').write_text(DPKG_QUERY_NOBLE)
        # The installed generation: linux-image-generic 6.8.0-149.149, linux-image-azure-fde 6.8.0-1046.52.
        (self.fake / 'dpkg-versions').write_text(
            'linux-image-generic\tinstall ok installed\t6.8.0-149.149\n'
            'linux-image-azure-fde\tinstall ok installed\t6.8.0-1046.52\n'
            'linux-image-6.8.0-149-generic\tinstall ok installed\t6.8.0-149.149\n')
        # What the archive offers: the generic modules metapackage of that generation and a newer one (with a
        # respin suffix); the azure-fde headers metapackage only of a newer generation.
        (self.fake / 'madison').write_text(
            ' linux-modules-nvidia-580-server-generic | 6.8.0-151.151 | http://archive.ubuntu.com/ubuntu '
            'noble-updates/restricted amd64 Packages\n'
            ' linux-modules-nvidia-580-server-generic | 6.8.0-149.149+1 | http://archive.ubuntu.com/ubuntu '
            'noble-security/restricted amd64 Packages\n'
            ' linux-headers-azure-fde | 6.8.0-1062.68 | http://archive.ubuntu.com/ubuntu noble-updates/main amd64 '
            'Packages\n')
        # No control data: no prebuilt module is judged against a driver version (see the mismatch test).
        (self.fake / 'show').write_text('')
        (self.fake / 'dpkg-status').write_text('')
        self.os_release('ID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"\n')
        (self.root / BLACKLIST_FILE.lstrip('/')).write_bytes(BLACKLIST)

    def os_release(self, text):
        (self.root / 'etc' / 'os-release').write_text(text)

    def kernel(self, release, modinfo=None, module_name='nvidia', modules_dep=None, headers=False, initramfs=None):
        """A bootable kernel; ``initramfs``: None (none), the bytes of the blacklist copy in main/ (b'' for an image
        without it), or 'FAIL' / 'HANG'."""
        (self.root / 'boot' / ('vmlinuz-' + release)).write_bytes(b'MZ')
        mdir = self.root / 'lib' / 'modules' / release
        mdir.mkdir(parents=True)
        if modules_dep is not None:
            (mdir / 'modules.dep').write_text(modules_dep)
            (mdir / 'modules.builtin').write_text('kernel/drivers/block/loop.ko\n')
        if headers:
            (self.root / 'usr' / 'src' / ('linux-headers-' + release)).mkdir(parents=True)
            (mdir / 'build').symlink_to('/usr/src/linux-headers-' + release)
        if modinfo is not None:
            (self.fake / 'modinfo' / release).mkdir(parents=True)
            (self.fake / 'modinfo' / release / module_name).write_text(modinfo)
        if initramfs is not None:
            image = self.root / 'boot' / ('initrd.img-' + release)
            if isinstance(initramfs, str):
                image.write_text(initramfs)
            else:
                tree = self.fake / 'initramfs' / release
                (tree / 'early' / 'kernel' / 'x86' / 'microcode').mkdir(parents=True)
                (tree / 'main' / 'etc' / 'modprobe.d').mkdir(parents=True)
                if initramfs:
                    (tree / 'main' / 'etc' / 'modprobe.d' / os.path.basename(BLACKLIST_FILE)).write_bytes(initramfs)
                image.write_text(str(tree))

    def calls(self, command=None):
        lines = (self.fake / 'calls').read_text().splitlines()
        return [c for c in lines if command is None or c.split(' ', 1)[0] == command]

    def args(self, **kwargs):
        args = dict(root=str(self.root), branch='580', blacklist_file=BLACKLIST_FILE)
        args.update(kwargs)
        return args


@pytest.fixture
def fake(tmp_path, monkeypatch):
    return Fake(tmp_path, monkeypatch)


def noble_image(fake):
    fake.kernel('6.8.0-149-generic', modinfo=MODINFO_580_NOBLE, modules_dep='kernel/nvidia-580srv/nvidia.ko:\n',
                initramfs=BLACKLIST)
    fake.kernel('7.0.0-1018-aws', modules_dep=NOVA, headers=True, initramfs=b'blacklist nouveau\n')
    fake.kernel('6.8.0-1046-azure-fde')


def test_inventory_and_plan_of_an_image(fake, run_module):
    noble_image(fake)
    result = run_module(nvidia_kernels.main, fake.args())
    assert not result.failed, result.get('msg')
    assert result['changed'] is False
    assert result['running'] == os.uname()[2]
    by_release = dict((k['release'], k) for k in result['kernels'])
    assert [k['release'] for k in result['kernels']] == ['7.0.0-1018-aws', '6.8.0-1046-azure-fde', '6.8.0-149-generic']
    generic, aws, azure = by_release['6.8.0-149-generic'], by_release['7.0.0-1018-aws'], by_release['6.8.0-1046-azure-fde']
    assert generic['module'] == {
        'filename': '/lib/modules/6.8.0-149-generic/kernel/nvidia-580srv/nvidia.ko', 'version': '580.178.04',
        'vermagic': '6.8.0-149-generic SMP preempt mod_unload modversions',
        'signer': 'Canonical Ltd. Kernel Module Signing', 'sig_key': 'E9:DF:13:0F:92:92:A9:B7'}
    assert aws['module'] == {} and azure['module'] == {}
    assert (generic['flavour'], aws['flavour'], azure['flavour']) == ('generic', 'aws', 'azure-fde')
    assert (generic['nova_core'], aws['nova_core'], azure['nova_core']) == (False, True, False)
    assert (generic['headers'], aws['headers'], azure['headers']) == (False, True, False)
    assert [k['running'] for k in result['kernels']] == [False, False, False]
    assert generic['initramfs'] == str(fake.root / 'boot' / 'initrd.img-6.8.0-149-generic')
    assert (generic['initramfs_blacklist'], aws['initramfs_blacklist'], azure['initramfs_blacklist']) == \
        ('current', 'stale', 'no-initramfs')
    assert azure['initramfs'] is None and 'has no initramfs' in azure['initramfs_reason']
    plan = result['plan']
    # 7.0.0-1018-aws: no prebuilt 580 module in the fixture's archive, and the archive has no headers for it, but
    # they are installed: DKMS builds against them. Its linux-image-aws is removed: no headers metapackage.
    assert [(k['release'], k['source']) for k in plan['kernels']] == \
        [('7.0.0-1018-aws', 'dkms'), ('6.8.0-1046-azure-fde', 'dkms'), ('6.8.0-149-generic', 'prebuilt')]
    assert plan['packages'] == ['linux-headers-6.8.0-1046-azure-fde', 'linux-modules-nvidia-580-server-6.8.0-149-generic',
                                'nvidia-dkms-580-server']
    # Pinned to the installed kernel generation, so that installing them installs no kernel; the azure-fde headers
    # metapackage only exists for a newer generation: left out, and the note says how to get it.
    assert plan['metapackages'] == ['linux-modules-nvidia-580-server-generic=6.8.0-149.149+1']
    assert len(plan['notes']) == 1 and plan['notes'][0].startswith(
        'linux-headers-azure-fde is left out: the archive has it at 6.8.0-1062.68, not for the installed '
        'linux-image-azure-fde 6.8.0-1046.52'), plan['notes']
    assert plan['dkms_package'] == 'nvidia-dkms-580-server'
    assert plan['refusals'] == []
    # modinfo runs in the image (-b ROOT); apt and dpkg read the image's state, once each (the prebuilt package's and
    # the driver's control data: as installed, and apt's candidates of the names apt knows).
    assert 'modinfo -b %s -k 6.8.0-149-generic nvidia' % fake.root in fake.calls('modinfo')
    assert fake.calls('apt-cache') == [
        'apt-cache -o Dir=%s pkgnames' % fake.root,
        'apt-cache -o Dir=%s show --no-all-versions linux-modules-nvidia-580-server-6.8.0-149-generic' % fake.root,
        'apt-cache -o Dir=%s madison linux-headers-azure-fde linux-modules-nvidia-580-server-generic' % fake.root]
    assert fake.calls('dpkg-query') == [
        'dpkg-query --admindir=%s/var/lib/dpkg -W -f ${Package}\\t${Status}\\t${Depends}\\n linux-image-*' % fake.root,
        'dpkg-query --admindir=%s/var/lib/dpkg -s linux-modules-nvidia-580-server-6.8.0-149-generic '
        'nvidia-kernel-common-580-server' % fake.root,
        'dpkg-query --admindir=%s/var/lib/dpkg -W -f ${Package}\\t${Status}\\t${Version}\\n linux-image-* '
        'linux-headers-* linux-modules-nvidia-*' % fake.root]
    assert (plan['driver_version'], plan['prebuilt_built_with']) == (
        '', {'linux-modules-nvidia-580-server-6.8.0-149-generic': ''})
    assert len(fake.calls('unmkinitramfs')) == 2
    assert os.listdir(str(fake.tmp)) == []          # the extracted images are removed


def test_a_prebuilt_module_of_another_driver_version_gets_dkms(fake, run_module):
    """noble-updates on 2026-12-04: nvidia-kernel-common-580-server 580.196.07, Canonical's 6.8.0-149-generic modules
    still built from 580.178.04. The kernel gets DKMS (its headers are in the archive); with source=prebuilt it is
    refused; a host that holds 580.178.04 keeps the prebuilt module."""
    fake.kernel('6.8.0-149-generic')
    (fake.fake / 'pkgnames').write_text('\n'.join(sorted(NOBLE_KNOWN | {'nvidia-kernel-common-580-server'})) + '\n')
    (fake.fake / 'show').write_text(
        'Package: linux-modules-nvidia-580-server-6.8.0-149-generic\nVersion: 6.8.0-149.149\n'
        'Depends: debconf (>= 0.5) | debconf-2.0, nvidia-kernel-common-580-server (>= 580.178.04)\n\n'
        'Package: nvidia-kernel-common-580-server\nVersion: 580.196.07-0ubuntu0.24.04.1\n')
    plan = run_module(nvidia_kernels.main, fake.args())['plan']
    assert (plan['driver_version'], plan['prebuilt_built_with']) == (
        '580.196.07-0ubuntu0.24.04.1', {'linux-modules-nvidia-580-server-6.8.0-149-generic': '580.178.04'})
    assert [(k['release'], k['source']) for k in plan['kernels']] == [('6.8.0-149-generic', 'dkms')]
    assert plan['packages'] == ['linux-headers-6.8.0-149-generic', 'nvidia-dkms-580-server']
    assert 'built from driver 580.178.04, not from the driver 580.196.07' in plan['kernels'][0]['why']
    refused = run_module(nvidia_kernels.main, fake.args(source='prebuilt'))['plan']
    assert refused['kernels'] == [] and refused['refusals'][0]['kernel'] == '6.8.0-149-generic'
    (fake.fake / 'dpkg-status').write_text(
        'Package: nvidia-kernel-common-580-server\nStatus: hold ok installed\nVersion: 580.178.04-0ubuntu0.24.04.1\n')
    held = run_module(nvidia_kernels.main, fake.args())['plan']
    assert [(k['release'], k['source']) for k in held['kernels']] == [('6.8.0-149-generic', 'prebuilt')]
    assert run_module(nvidia_kernels.main, fake.args(source='dkms'))['plan']['prebuilt_built_with'] == {}
    # The version the role pins (nvidia_driver_version) wins over the installed one, both ways.
    pinned = run_module(nvidia_kernels.main, fake.args(driver_version='580.196.07'))['plan']
    assert pinned['driver_version'] == '580.196.07'
    assert [(k['release'], k['source']) for k in pinned['kernels']] == [('6.8.0-149-generic', 'dkms')]
    (fake.fake / 'dpkg-status').write_text('')
    pinned = run_module(nvidia_kernels.main, fake.args(driver_version='580.178.04'))['plan']
    assert [(k['release'], k['source']) for k in pinned['kernels']] == [('6.8.0-149-generic', 'prebuilt')]


def test_stale_initramfs_is_not_reported_current(fake, run_module):
    """Negative control: a copy of the blacklist with other bytes is stale; the same bytes are current."""
    fake.kernel('6.8.0-149-generic', initramfs=BLACKLIST + b'# edited\n')
    fake.kernel('6.8.0-150-generic', initramfs=b'')
    kernels = run_module(nvidia_kernels.main, fake.args(plan=False))['kernels']
    assert [(k['release'], k['initramfs_blacklist']) for k in kernels] == \
        [('6.8.0-150-generic', 'missing'), ('6.8.0-149-generic', 'stale')]
    (fake.root / BLACKLIST_FILE.lstrip('/')).write_bytes(BLACKLIST + b'# edited\n')
    kernels = run_module(nvidia_kernels.main, fake.args(plan=False))['kernels']
    assert [k['initramfs_blacklist'] for k in kernels] == ['missing', 'current']


def test_plan_false_reads_no_package_state(fake, run_module):
    noble_image(fake)
    result = run_module(nvidia_kernels.main, fake.args(plan=False, branch=None))
    assert 'plan' not in result and len(result['kernels']) == 3
    assert fake.calls('apt-cache') == [] and fake.calls('dpkg-query') == []


def test_only_the_requested_kernels(fake, run_module):
    noble_image(fake)
    result = run_module(nvidia_kernels.main, fake.args(kernels=['6.8.0-149-generic']))
    assert [k['release'] for k in result['kernels']] == ['6.8.0-149-generic']
    assert result['plan']['packages'] == ['linux-modules-nvidia-580-server-6.8.0-149-generic']


def test_a_requested_kernel_that_is_not_bootable_fails_naming_the_bootable_ones(fake, run_module):
    noble_image(fake)
    (fake.root / 'boot' / 'vmlinuz-6.8.0-31-generic').write_bytes(b'MZ')     # modules gone: not bootable
    result = run_module(nvidia_kernels.main, fake.args(kernels=['6.8.0-31-generic', '6.8.0-149-generic']))
    assert result.failed
    assert "'6.8.0-31-generic' is not bootable" in result['msg']
    assert 'the bootable kernels are: 7.0.0-1018-aws, 6.8.0-1046-azure-fde, 6.8.0-149-generic' in result['msg']
    assert fake.calls() == []


def test_in_a_container_the_running_kernel_is_not_a_target(fake, run_module, monkeypatch):
    """The Docker host's kernel: uname -r names it, /boot may even hold it, but /lib/modules has nothing for it."""
    fake.kernel('6.8.0-149-generic', modinfo=MODINFO_580_NOBLE, initramfs=BLACKLIST)
    (fake.root / 'boot' / 'vmlinuz-6.8.0-1052-aws').write_bytes(b'MZ')
    real = os.uname()
    monkeypatch.setattr(os, 'uname', lambda: (real[0], real[1], '6.8.0-1052-aws', real[3], real[4]))
    result = run_module(nvidia_kernels.main, fake.args())
    assert result['running'] == '6.8.0-1052-aws'
    assert [k['release'] for k in result['kernels']] == ['6.8.0-149-generic']
    assert [k['release'] for k in result['plan']['kernels']] == ['6.8.0-149-generic']


def test_no_bootable_kernel_is_a_refusal_not_a_failure(fake, run_module):
    result = run_module(nvidia_kernels.main, fake.args())
    assert not result.failed
    assert result['kernels'] == []
    assert [r['kernel'] for r in result['plan']['refusals']] == ['']
    assert fake.calls() == []


def test_debian_dkms_module_named_nvidia_current(fake, run_module):
    fake.os_release('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n')
    dkms_modinfo = ('filename:       /lib/modules/6.1.0-50-cloud-amd64/updates/dkms/nvidia-current.ko\n'
                    'version:        535.247.01\nvermagic:       6.1.0-50-cloud-amd64 SMP preempt mod_unload modversions \n')
    fake.kernel('6.1.0-50-cloud-amd64', modinfo=dkms_modinfo, module_name='nvidia-current', headers=True)
    (fake.fake / 'pkgnames').write_text('linux-headers-6.1.0-50-cloud-amd64\nlinux-headers-cloud-amd64\n')
    (fake.fake / 'dpkg').write_text(
        'linux-image-cloud-amd64\tinstall ok installed\tlinux-image-6.1.0-50-cloud-amd64 (= 6.1.148-1)\n')
    (fake.fake / 'dpkg-versions').write_text('linux-image-cloud-amd64\tinstall ok installed\t6.1.176-1\n')
    # Debian's point release and its security pocket: the headers metapackage of the installed generation is taken
    # (the newer one would also move linux-image-cloud-amd64, built from the same source, to a new kernel).
    (fake.fake / 'madison').write_text(
        'linux-headers-cloud-amd64 | 6.1.192-3 | http://deb.debian.org/debian-security bookworm-security/main amd64 '
        'Packages\n'
        'linux-headers-cloud-amd64 | 6.1.176-1 | http://deb.debian.org/debian bookworm/main amd64 Packages\n')
    result = run_module(nvidia_kernels.main, fake.args(branch='535', dkms_package='nvidia-tesla-535-kernel-dkms'))
    [kernel] = result['kernels']
    assert kernel['module']['filename'].endswith('/nvidia-current.ko') and kernel['module']['signer'] == ''
    assert kernel['nova_core'] is False      # no modules.dep in the fake: modinfo answered
    assert fake.calls('modinfo') == [
        'modinfo -b %s -k 6.1.0-50-cloud-amd64 nova_core' % fake.root,
        'modinfo -b %s -k 6.1.0-50-cloud-amd64 nvidia' % fake.root,
        'modinfo -b %s -k 6.1.0-50-cloud-amd64 nvidia-current' % fake.root]
    assert result['plan']['packages'] == ['linux-headers-6.1.0-50-cloud-amd64', 'nvidia-tesla-535-kernel-dkms']
    assert result['plan']['metapackages'] == ['linux-headers-cloud-amd64=6.1.176-1']
    assert result['plan']['notes'] == []


def test_debian_prebuilt_is_refused(fake, run_module):
    fake.os_release('ID=debian\n')
    fake.kernel('6.12.57+deb13-amd64', headers=True)
    result = run_module(nvidia_kernels.main, fake.args(source='prebuilt'))
    assert not result.failed
    [refusal] = result['plan']['refusals']
    assert refusal['kernel'] == '6.12.57+deb13-amd64' and 'nvidia_driver_module_source' in refusal['fix']


@pytest.mark.parametrize('image,expected', [
    ('FAIL', "failed with exit code 2: cpio: premature end of archive"),
    ('HANG', 'did not finish within 1 seconds'),
])
def test_initramfs_that_cannot_be_extracted_is_unreadable(fake, run_module, image, expected):
    fake.kernel('6.8.0-149-generic', initramfs=image)
    [kernel] = run_module(nvidia_kernels.main, fake.args(plan=False, timeout=1))['kernels']
    assert kernel['initramfs_blacklist'] == 'unreadable'
    assert expected in kernel['initramfs_reason']


def test_without_unmkinitramfs_the_initramfs_is_unreadable(fake, run_module, monkeypatch):
    real = basic.AnsibleModule.get_bin_path

    def get_bin_path(self, name, *args, **kwargs):
        return None if name == 'unmkinitramfs' else real(self, name, *args, **kwargs)
    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', get_bin_path)
    fake.kernel('6.8.0-149-generic', initramfs=BLACKLIST)
    [kernel] = run_module(nvidia_kernels.main, fake.args(plan=False))['kernels']
    assert (kernel['initramfs_blacklist'], kernel['initramfs_reason']) == \
        ('unreadable', 'unmkinitramfs was not found (install initramfs-tools-core)')


def test_without_blacklist_file_no_initramfs_is_extracted(fake, run_module):
    fake.kernel('6.8.0-149-generic', initramfs=BLACKLIST)
    fake.kernel('6.8.0-150-generic')
    kernels = run_module(nvidia_kernels.main, fake.args(plan=False, blacklist_file=''))['kernels']
    assert [(k['initramfs'], k['initramfs_blacklist'], k['initramfs_reason']) for k in kernels] == \
        [(None, None, None), (str(fake.root / 'boot' / 'initrd.img-6.8.0-149-generic'), None, None)]
    assert fake.calls('unmkinitramfs') == []


def test_blacklist_file_gone_from_disk(fake, run_module):
    fake.kernel('6.8.0-149-generic', initramfs=BLACKLIST)
    (fake.root / BLACKLIST_FILE.lstrip('/')).unlink()
    [kernel] = run_module(nvidia_kernels.main, fake.args(plan=False))['kernels']
    assert kernel['initramfs_blacklist'] == 'stale' and 'no longer exists on disk' in kernel['initramfs_reason']


def test_hostile_modinfo_and_names(fake, run_module):
    fake.kernel('6.8.0-149-generic', modinfo='filename: /x\x1b]0;owned\x07.ko\nversion: \xff\xfe\n' + '\x00' * 5000)
    (fake.root / 'boot' / 'vmlinuz-6.8.0-1-generic\nx').write_bytes(b'MZ')
    (fake.root / 'boot' / 'vmlinuz-..').write_bytes(b'MZ')
    result = run_module(nvidia_kernels.main, fake.args(plan=False))
    assert not result.failed
    assert [(k['release'], k['module']) for k in result['kernels']] == [('6.8.0-149-generic', {})]


def test_check_mode_is_the_same_read(fake, run_module):
    noble_image(fake)
    normal = run_module(nvidia_kernels.main, fake.args())
    checked = run_module(nvidia_kernels.main, fake.args(_ansible_check_mode=True))
    assert checked['changed'] is False
    assert checked['kernels'] == normal['kernels'] and checked['plan'] == normal['plan']


def test_dpkg_query_without_any_linux_image_package(fake, run_module):
    fake.kernel('6.8.0-149-generic')
    (fake.bin / 'dpkg-query').write_text(
        '#!/bin/sh\necho "dpkg-query: no packages found matching linux-image-*" >&2\nexit 1\n')
    result = run_module(nvidia_kernels.main, fake.args())
    assert result['plan']['metapackages'] == [] and result['plan']['kernels'][0]['source'] == 'prebuilt'


def test_apt_cache_failure_fails_naming_the_command(fake, run_module):
    fake.kernel('6.8.0-149-generic')
    (fake.bin / 'apt-cache').write_text('#!/bin/sh\necho "E: Could not open file" >&2\nexit 100\n')
    result = run_module(nvidia_kernels.main, fake.args())
    assert result.failed
    assert 'pkgnames' in result['msg'] and 'exit code 100: E: Could not open file' in result['msg']


@pytest.mark.parametrize('args,message', [
    (dict(blacklist_file='etc/modprobe.d/x.conf'), 'blacklist_file must be an absolute path'),
    (dict(branch=None), 'branch is required when plan is true'),
    (dict(branch='580 && reboot'), 'branch must be a driver branch number'),
    (dict(module_names=['-v']), "'-v' is not a kernel module name"),
    (dict(module_names=[]), 'module_names must name at least one module'),
    (dict(timeout=0), 'timeout must be a positive number'),
    (dict(dkms_package='nvidia dkms'), 'dkms_package must be a package name'),
    (dict(root='/nonexistent/root'), 'is not a directory'),
])
def test_bad_arguments_fail_before_anything_runs(fake, run_module, args, message):
    fake.kernel('6.8.0-149-generic')
    result = run_module(nvidia_kernels.main, fake.args(**args))
    assert result.failed and message in result['msg']
    assert fake.calls() == []


@pytest.mark.parametrize('said,refused', [('is not enrolled', True), ('is already enrolled', False)])
def test_secure_boot_refuses_dkms_modules_whose_key_is_not_enrolled(fake, run_module, tmp_path, said, refused):
    fake.os_release('ID=debian\n')
    fake.kernel('6.1.0-50-cloud-amd64', headers=True)
    (fake.fake / 'pkgnames').write_text('linux-headers-6.1.0-50-cloud-amd64\n')
    certificate = tmp_path / 'mok.pub'
    certificate.write_bytes(b'0\x82')
    mokutil = fake.bin / 'mokutil'
    mokutil.write_text('#!/bin/sh\necho "$0 $*" >> "$FAKE/calls.mokutil"\necho "$2 %s"\n' % said)
    mokutil.chmod(0o755)
    result = run_module(nvidia_kernels.main, fake.args(branch='535', secure_boot=True, mok_certificate=str(certificate)))
    assert (fake.fake / 'calls.mokutil').read_text().split()[1:] == ['--test-key', str(certificate)]
    refusals = [r for r in result['plan']['refusals'] if 'Secure Boot' in r['message']]
    assert bool(refusals) is refused, result['plan']['refusals']
    if refused:
        assert refusals[0]['kernel'] == '6.1.0-50-cloud-amd64'
        assert '%s %s' % (certificate, said) in refusals[0]['message']
    # Without Secure Boot mokutil is not asked.
    (fake.fake / 'calls.mokutil').unlink()
    result = run_module(nvidia_kernels.main, fake.args(branch='535', mok_certificate=str(certificate)))
    assert result['plan']['refusals'] == [] and not (fake.fake / 'calls.mokutil').exists()


def test_a_link_loop_in_the_image_fails_naming_the_path(fake, run_module):
    """Issue 52, item 11: a loop is refused with a message, not a traceback and not a guess."""
    fake.kernel('6.8.0-149-generic')
    (fake.root / 'lib' / 'modules' / '6.8.0-149-generic' / 'build').symlink_to('build')
    result = run_module(nvidia_kernels.main, fake.args(plan=False))
    assert result.failed
    assert 'lib/modules/6.8.0-149-generic/build: more than 40 symbolic links' in result['msg']
    assert result['msg'].startswith('root %s: ' % fake.root)


def test_an_absolute_intermediate_link_reads_the_image_not_the_build_host(fake, run_module, tmp_path):
    """The image's etc and boot are absolute links (to paths of the build host, planted outside the root, with other
    content): the module reads the image's own files at those paths inside the root."""
    host = tmp_path / 'host'
    (host / 'etc').mkdir(parents=True)
    (host / 'etc' / 'os-release').write_text('ID=debian\n')              # the build host says Debian
    (host / 'boot').mkdir()
    (host / 'boot' / 'initrd.img-6.8.0-149-generic').write_text('FAIL')
    fake.kernel('6.8.0-149-generic', modinfo=MODINFO_580_NOBLE, initramfs=BLACKLIST)
    for name in ('etc', 'boot'):
        inside = fake.root / str(host / name).lstrip('/')
        inside.parent.mkdir(parents=True, exist_ok=True)
        os.rename(str(fake.root / name), str(inside))
        (fake.root / name).symlink_to(str(host / name))                  # absolute: etc -> /<host>/etc
    result = run_module(nvidia_kernels.main, fake.args())
    assert not result.failed, result.get('msg')
    assert [k['release'] for k in result['kernels']] == ['6.8.0-149-generic']
    assert result['kernels'][0]['initramfs_blacklist'] == 'current'     # the image's initramfs, not the host's
    assert result['plan']['kernels'][0]['source'] == 'prebuilt'          # Ubuntu: the image's os-release
