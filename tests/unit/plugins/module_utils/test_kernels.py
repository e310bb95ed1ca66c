# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The kernel modules of module_utils (_kernel_release, _image_tree, _boot_kernels, _modinfo, _initramfs, _deb_control,
_dkms, _kernel_plan): modinfo text, kernel releases and flavours, bootable kernels, initramfs copies, and the plan."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _boot_kernels
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _deb_control
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _dkms
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _image_tree
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _initramfs
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_plan
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_release
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _modinfo

# Recorded 2026-12-03 in an Ubuntu 24.04 container after apt-get install linux-image-6.8.0-149-generic
# nvidia-headless-no-dkms-580-server nvidia-utils-580-server linux-modules-nvidia-580-server-6.8.0-149-generic:
# modinfo -k 6.8.0-149-generic nvidia (the lines this module reads, among others; vermagic ends with a blank).
MODINFO_580_NOBLE = (
    'filename:       /lib/modules/6.8.0-149-generic/kernel/nvidia-580srv/nvidia.ko\n'
    'import_ns:      DMA_BUF\n'
    'alias:          char-major-195-*\n'
    'version:        580.178.04\n'
    'supported:      external\n'
    'license:        Dual MIT/GPL\n'
    'srcversion:     0123456789ABCDEF0123456\n'
    'depends:        \n'
    'retpoline:      Y\n'
    'name:           nvidia\n'
    'vermagic:       6.8.0-149-generic SMP preempt mod_unload modversions \n'
    'sig_id:         PKCS#7\n'
    'signer:         Canonical Ltd. Kernel Module Signing\n'
    'sig_key:        E9:DF:13:0F:92:92:A9:B7\n'
    'sig_hashalgo:   sha512\n'
    'signature:      30:45:02:21:00:A1:B2:C3:D4:E5:F6:07:18:29:3A:4B:5C:6D:7E:8F:\n'
    '\t\t90:A1:B2:C3:D4:E5:F6:07:18:29:3A:4B:5C:6D:7E:8F\n'
    'parm:           NvSwitchRegDwords:NvSwitch regkey (charp)\n'
    'parm:           NVreg_OpenRmEnableUnsupportedGpus:int\n'
)


def test_parse_modinfo_of_the_noble_580_module():
    assert _modinfo.parse_modinfo(MODINFO_580_NOBLE) == {
        'filename': '/lib/modules/6.8.0-149-generic/kernel/nvidia-580srv/nvidia.ko',
        'version': '580.178.04',
        'vermagic': '6.8.0-149-generic SMP preempt mod_unload modversions',
        'signer': 'Canonical Ltd. Kernel Module Signing',
        'sig_key': 'E9:DF:13:0F:92:92:A9:B7',
        'sig_hashalgo': 'sha512',
        'name': 'nvidia',
    }


def test_parse_modinfo_of_an_unsigned_dkms_module_has_no_signer():
    text = ('filename:       /lib/modules/6.1.0-50-amd64/updates/dkms/nvidia-current.ko\n'
            'version:        535.247.01\nvermagic:       6.1.0-50-amd64 SMP preempt mod_unload modversions \n')
    assert _modinfo.parse_modinfo(text) == {
        'filename': '/lib/modules/6.1.0-50-amd64/updates/dkms/nvidia-current.ko', 'version': '535.247.01',
        'vermagic': '6.1.0-50-amd64 SMP preempt mod_unload modversions'}


@pytest.mark.parametrize('junk', [
    None, 42, b'', '', [], {'filename': 'x'},
    'modinfo: ERROR: Module nova_core not found.\n',
    '\x00\xff' * 1000,
    b'filename:       /lib/modules/\xff\xfe/nvidia.ko\n',
    'filename:' + 'A' * (_modinfo.MAX_FIELD_CHARS + 1) + '\n',
    'version: 580.1\x1b[31m\n',
    'version: 580\u202e.1\n',
    'signer:\n',
    ':::\n\n\n',
])
def test_parse_modinfo_never_raises_and_keeps_only_clean_values(junk):
    fields = _modinfo.parse_modinfo(junk)
    assert fields == {}


def test_parse_modinfo_keeps_the_valid_fields_of_a_mixed_answer_and_the_first_of_each():
    text = ('version: 580.1\x07\nversion: 580.178.04\nfilename: /a.ko\nfilename: /b.ko\n'
            'NVRM: junk line\nvermagic:\t6.8.0-149-generic SMP\n')
    assert _modinfo.parse_modinfo(text) == {'version': '580.178.04', 'filename': '/a.ko',
                                            'vermagic': '6.8.0-149-generic SMP'}


def test_parse_modinfo_reads_only_a_bounded_prefix():
    text = 'parm: x\n' * (_modinfo.MAX_MODINFO_CHARS // 8 + 10) + 'version: 580.178.04\n'
    assert _modinfo.parse_modinfo(text) == {}


@pytest.mark.parametrize('release,flavour', [
    ('6.8.0-149-generic', 'generic'),
    ('6.8.0-1052-aws', 'aws'),
    ('7.0.0-1018-aws', 'aws'),
    ('6.8.0-1046-azure-fde', 'azure-fde'),
    ('6.8.0-1047-nvidia-lowlatency', 'nvidia-lowlatency'),
    ('6.1.0-50-amd64', 'amd64'),
    ('6.1.0-50-cloud-amd64', 'cloud-amd64'),
    ('6.12.57+deb13-amd64', 'amd64'),
    ('6.12.57+deb13-cloud-amd64', 'cloud-amd64'),
    ('6.1.0-50-686-pae', '686-pae'),
    # Not a kernel release of either distribution:
    ('6.8.0-149-123', ''), ('6.8.0', ''), ('generic', ''), ('', ''), ('6.8.0-149-Generic', ''),
    ('6.8.0-149-generic\n', ''), ('6.8.0-149-gen eric', ''), ('6.8.0-149-' + 'a' * 80, ''), (None, ''), (6.8, ''),
])
def test_kernel_flavour(release, flavour):
    assert _kernel_release.kernel_flavour(release) == flavour


def test_release_sort_key_newest_first():
    releases = ['6.8.0-31-generic', '6.8.0-149-generic', '7.0.0-1018-aws', '6.8.0-1052-aws', 'not-a-release',
                '6.12.57+deb13-amd64', '6.1.0-50-amd64']
    assert _kernel_release.newest_first(releases) == [
        '7.0.0-1018-aws', '6.12.57+deb13-amd64', '6.8.0-1052-aws', '6.8.0-149-generic', '6.8.0-31-generic',
        '6.1.0-50-amd64', 'not-a-release']


@pytest.mark.parametrize('older,newer', [
    # Issue 52 (Low): an upstream release candidate sorts below its release, in every spelling.
    ('6.9.0-rc3', '6.9.0'),
    ('6.9.0-rc1', '6.9.0-rc2'),
    ('6.9.0-rc2', '6.9.0-rc10'),                          # numbers as numbers
    ('6.9.0-rc10', '6.9.0'),
    ('6.8.12', '6.9.0-rc1'),                              # an rc of a later release is newer than the last stable
    ('6.9.0-rc7', '6.9.1'),
    ('6.9~rc3', '6.9'),                                    # Debian's spelling
    ('6.9~rc3', '6.9~rc4'),
    ('6.9.0-rc3-amd64', '6.9.0-1-amd64'),                  # an rc and a release build of one flavour
    ('6.9.0-rc3-amd64', '6.9.0-amd64'),
    ('6.9.0-060900rc3-generic', '6.9.0-060900-generic'),   # Ubuntu's mainline builds
    ('6.9.0', '6.9.0-1-amd64'),                            # a distribution build is after the bare release
    ('6.8.0-31-generic', '6.8.0-149-generic'),
    ('6.8.0-1052-aws', '7.0.0-1018-aws'),
    ('6.1.0-50-amd64', '6.12.57+deb13-amd64'),
])
def test_release_candidates_sort_below_their_release(older, newer):
    assert _kernel_release.release_sort_key(older) < _kernel_release.release_sort_key(newer)
    assert _kernel_release.newest_first([older, newer]) == [newer, older]
    assert _kernel_release.newest_first([newer, older]) == [newer, older]


def test_release_order_is_a_total_order_on_a_mixed_list():
    releases = ['6.9.0', '6.9.0-rc3', '6.9.0-rc1', '6.9.0-rc10', '6.9.0-rc3-amd64', '6.9.0-1-amd64', '6.8.12',
                '6.10.0-rc1', '6.9.0-060900rc3-generic', '6.9.0-060900-generic', 'not-a-release']
    assert _kernel_release.newest_first(releases) == [
        '6.10.0-rc1', '6.9.0-060900-generic', '6.9.0-060900rc3-generic', '6.9.0-1-amd64', '6.9.0', '6.9.0-rc10',
        '6.9.0-rc3-amd64', '6.9.0-rc3', '6.9.0-rc1', '6.8.12', 'not-a-release']


def test_negative_control_the_old_key_put_the_rc_above_the_release():
    """The key before issue 52 (digit runs as numbers, text as text) ordered 6.9.0-rc3 above 6.9.0."""
    import re

    def old_key(release):
        return tuple((1, int(tok), '') if tok.isdigit() else (0, 0, tok) for tok in re.findall(r'[0-9]+|[^0-9]+', release))
    assert old_key('6.9.0-rc3') > old_key('6.9.0')
    assert _kernel_release.release_sort_key('6.9.0-rc3') < _kernel_release.release_sort_key('6.9.0')


def test_bootable_kernels_put_the_release_before_its_rc(tmp_path):
    """nvidia_kernels lists (and plans) the bootable kernels newest first: a self-built 6.9.0 after its rc."""
    for release in ('6.9.0-rc3', '6.9.0', '6.9.0-rc1'):
        make_kernel(tmp_path, release)
    assert _boot_kernels.bootable_kernels(str(tmp_path)) == ['6.9.0', '6.9.0-rc3', '6.9.0-rc1']


def test_kernel_updates_uses_the_same_order():
    from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_updates as u
    # One comparison of kernel releases: _kernel_updates imports it (read by name: it is not _kernel_updates' own).
    assert getattr(u, 'newest_first') is _kernel_release.newest_first


@pytest.mark.parametrize('junk', [None, 7, '', 'x' * 100, '9' * 5000, '\n'])
def test_release_sort_key_never_raises(junk):
    assert sorted(['6.8.0-149-generic', junk], key=_kernel_release.release_sort_key)[-1] == '6.8.0-149-generic'


def make_kernel(root, release, modules_dir=True, vmlinuz=True):
    boot = root / 'boot'
    boot.mkdir(exist_ok=True)
    if vmlinuz:
        (boot / ('vmlinuz-' + release)).write_bytes(b'kernel')
    if modules_dir:
        (root / 'lib' / 'modules' / release).mkdir(parents=True)


def test_bootable_kernels(tmp_path):
    make_kernel(tmp_path, '6.8.0-149-generic')
    make_kernel(tmp_path, '7.0.0-1018-aws')
    make_kernel(tmp_path, '6.8.0-1052-aws', modules_dir=False)       # the container's host kernel: no modules
    make_kernel(tmp_path, '6.8.0-31-generic', vmlinuz=False)         # modules left behind by a removed kernel
    (tmp_path / 'boot' / 'vmlinuz').symlink_to('vmlinuz-6.8.0-149-generic')
    (tmp_path / 'boot' / 'vmlinuz.old').write_bytes(b'')
    (tmp_path / 'boot' / 'vmlinuz-bad name').write_bytes(b'')
    (tmp_path / 'lib' / 'modules' / 'bad name').mkdir()
    assert _boot_kernels.bootable_kernels(str(tmp_path)) == ['7.0.0-1018-aws', '6.8.0-149-generic']


def test_bootable_kernels_of_a_merged_usr_tree_and_an_empty_one(tmp_path):
    (tmp_path / 'usr' / 'lib' / 'modules' / '6.12.57+deb13-cloud-amd64').mkdir(parents=True)
    (tmp_path / 'lib').symlink_to('usr/lib')
    (tmp_path / 'boot').mkdir()
    (tmp_path / 'boot' / 'vmlinuz-6.12.57+deb13-cloud-amd64').write_bytes(b'')
    assert _boot_kernels.bootable_kernels(str(tmp_path)) == ['6.12.57+deb13-cloud-amd64']
    assert _boot_kernels.bootable_kernels(str(tmp_path / 'nothing')) == []


def test_headers_follow_an_absolute_link_inside_the_root(tmp_path):
    make_kernel(tmp_path, '6.8.0-149-generic')
    make_kernel(tmp_path, '6.8.0-150-generic')
    (tmp_path / 'usr' / 'src' / 'linux-headers-6.8.0-149-generic').mkdir(parents=True)
    (tmp_path / 'lib/modules/6.8.0-149-generic/build').symlink_to('/usr/src/linux-headers-6.8.0-149-generic')
    (tmp_path / 'lib/modules/6.8.0-150-generic/build').symlink_to('/usr/src/linux-headers-6.8.0-150-generic')
    assert _boot_kernels.headers_installed(str(tmp_path), '6.8.0-149-generic') is True
    assert _boot_kernels.headers_installed(str(tmp_path), '6.8.0-150-generic') is False   # a dangling link is no headers


# Links inside a root (issue 52, item 11) -------------------------------------------------------------------------

RELEASE = '6.8.0-149-generic'


def _old_resolve_in_root(root, path, hops=8):
    """The resolver before issue 52: only the last component was followed, so a link in an intermediate component
    (an image's lib -> /usr/lib) was followed by the kernel, on the build host. Kept here as the negative control."""
    for _i in range(hops):
        if not os.path.islink(path):
            return path
        target = os.readlink(path)
        path = os.path.join(root, target.lstrip('/')) if os.path.isabs(target) else os.path.join(
            os.path.dirname(path), target)
    return path


def image_with_absolute_lib_link(tmp_path):
    """An image at tmp/image whose lib is an absolute link to <host>/usr/lib (tmp/host: the build host's files,
    outside the root), as an image built with `lib -> /usr/lib` looks when mounted. The same absolute path inside the
    image holds the image's own kernel, which has no nvidia module; the host's has one (distinguishable)."""
    image, host = tmp_path / 'image', tmp_path / 'host'
    host_lib = host / 'usr' / 'lib'
    for tree, listed in ((host_lib, 'kernel/nvidia-580srv/nvidia.ko:\n'),
                         (image / str(host_lib).lstrip('/'), 'kernel/drivers/gpu/drm/nouveau/nouveau.ko.zst:\n')):
        (tree / 'modules' / RELEASE).mkdir(parents=True)
        (tree / 'modules' / RELEASE / 'modules.dep').write_text(listed)
    (image / 'lib').symlink_to(str(host_lib))                       # absolute: lib -> /<host>/usr/lib
    (image / 'boot').mkdir()
    (image / 'boot' / ('vmlinuz-' + RELEASE)).write_bytes(b'kernel')
    return str(image), str(host)


def test_an_absolute_link_in_an_intermediate_component_resolves_inside_the_root(tmp_path):
    root, host = image_with_absolute_lib_link(tmp_path)
    resolved = _image_tree.resolve_in_root(root, os.path.join(root, 'lib', 'modules', RELEASE))
    assert resolved == os.path.join(root, host.lstrip('/'), 'usr', 'lib', 'modules', RELEASE)
    assert _boot_kernels.modules_dir(root, RELEASE) == resolved
    assert _boot_kernels.module_listed(root, RELEASE, 'nvidia') is False         # the image's own modules.dep
    assert _boot_kernels.module_listed(root, RELEASE, 'nouveau') is True
    assert _boot_kernels.bootable_kernels(root) == [RELEASE]


def test_negative_control_the_old_resolver_read_the_host_file(tmp_path, monkeypatch):
    root, host = image_with_absolute_lib_link(tmp_path)
    monkeypatch.setattr(_boot_kernels, 'resolve_in_root', _old_resolve_in_root)
    assert _boot_kernels.module_listed(root, RELEASE, 'nvidia') is True          # the build host's modules.dep, outside root
    monkeypatch.undo()
    assert _boot_kernels.module_listed(root, RELEASE, 'nvidia') is False


def test_an_image_without_the_target_inside_it_finds_nothing_rather_than_the_host(tmp_path):
    """The same image, its own copy removed: the old code found the host's kernel modules; now none."""
    root, host = image_with_absolute_lib_link(tmp_path)
    import shutil
    shutil.rmtree(os.path.join(root, host.lstrip('/').split('/', maxsplit=1)[0]))
    assert _boot_kernels.modules_dir(root, RELEASE) is None
    assert _boot_kernels.bootable_kernels(root) == []
    assert _boot_kernels.module_listed(root, RELEASE, 'nvidia') is None
    assert os.path.isdir(_old_resolve_in_root(root, os.path.join(root, 'lib', 'modules', RELEASE)))   # the host's


def test_dotdot_in_a_link_is_clamped_at_the_root(tmp_path):
    root = tmp_path / 'image'
    root.mkdir()
    make_kernel(root, RELEASE)
    (root / 'usr' / 'src' / 'linux-headers-x').mkdir(parents=True)
    (tmp_path / 'usr' / 'src' / 'linux-headers-x').mkdir(parents=True)   # what ../.. would reach: outside root
    deep = '../' * 12 + 'usr/src/linux-headers-x'
    (root / 'lib' / 'modules' / RELEASE / 'build').symlink_to(deep)
    assert _image_tree.resolve_in_root(str(root), str(root / 'lib' / 'modules' / RELEASE / 'build')) == \
        str(root / 'usr' / 'src' / 'linux-headers-x')
    assert _boot_kernels.headers_installed(str(root), RELEASE) is True
    # .. in the path itself, and an intermediate link climbing out: both stay inside.
    (root / 'etc').mkdir()
    (root / 'etc' / 'up').symlink_to('../../../..')
    assert _image_tree.resolve_in_root(str(root), str(root / 'etc' / 'up' / 'usr' / 'src')) == str(root / 'usr' / 'src')
    assert _image_tree.resolve_in_root(str(root), str(root) + '/etc/../../../usr') == str(root / 'usr')
    assert _image_tree.resolve_in_root(str(root), str(root)) == str(root)


@pytest.mark.parametrize('loop', [
    [('a', 'b'), ('b', 'a')],                        # two links pointing at each other
    [('a', 'a')],                                    # a link to itself
    [('a', '/a')],                                   # absolute, to itself inside the root
    [('a', 'a/x')],                                  # growing
])
def test_a_link_loop_is_refused_cleanly(tmp_path, loop):
    root = tmp_path / 'image'
    root.mkdir()
    for name, target in loop:
        (root / name).symlink_to(target)
    with pytest.raises(_image_tree.PathRefused, match=r'more than 40 symbolic links while resolving it inside'):
        _image_tree.resolve_in_root(str(root), str(root / 'a' / 'lib'))


def test_a_loop_in_boot_or_lib_refuses_the_inventory(tmp_path):
    root = tmp_path / 'image'
    root.mkdir()
    (root / 'boot').symlink_to('boot')
    with pytest.raises(_image_tree.PathRefused, match='boot: more than 40'):
        _boot_kernels.bootable_kernels(str(root))


def test_a_long_chain_within_the_limit_resolves(tmp_path):
    root = tmp_path / 'image'
    (root / 'end').mkdir(parents=True)
    for i in range(40):
        (root / ('l%d' % i)).symlink_to('l%d' % (i + 1) if i < 39 else '/end')
    assert _image_tree.resolve_in_root(str(root), str(root / 'l0')) == str(root / 'end')
    (root / 'l40').symlink_to('l0')
    with pytest.raises(_image_tree.PathRefused):
        _image_tree.resolve_in_root(str(root), str(root / 'l40'))


def test_a_path_outside_the_root_is_refused(tmp_path):
    with pytest.raises(_image_tree.PathRefused, match='is not under the root'):
        _image_tree.resolve_in_root(str(tmp_path / 'image'), str(tmp_path / 'other'))


def test_the_live_root_resolves_as_the_kernel_does(tmp_path):
    (tmp_path / 'dir').mkdir()
    (tmp_path / 'link').symlink_to(str(tmp_path / 'dir'))
    assert _image_tree.resolve_in_root('/', str(tmp_path / 'link' / 'x')) == os.path.realpath(str(tmp_path / 'dir')) + '/x'


def test_newest_build_log_follows_no_link_below_dkms(tmp_path):
    outside = tmp_path / 'host/nvidia/580/build/make.log'
    outside.parent.mkdir(parents=True)
    outside.write_text('host log')
    dkms = tmp_path / 'image/var/lib/dkms'
    dkms.mkdir(parents=True)
    (dkms / 'nvidia').symlink_to(str(tmp_path / 'host/nvidia'))
    assert _dkms.newest_build_log(str(tmp_path / 'image')) is None
    (dkms / 'real/1/build').mkdir(parents=True)
    (dkms / 'real/1/build/make.log').write_text('image log')
    assert _dkms.newest_build_log(str(tmp_path / 'image')) == str(dkms / 'real/1/build/make.log')


def test_module_listed_from_modules_dep_and_builtin(tmp_path):
    make_kernel(tmp_path, '7.0.0-1018-aws')
    make_kernel(tmp_path, '6.8.0-149-generic')
    make_kernel(tmp_path, '6.8.0-150-generic')
    (tmp_path / 'lib/modules/7.0.0-1018-aws/modules.dep').write_text(
        'kernel/drivers/gpu/nova-core/nova_core.ko.zst: kernel/drivers/gpu/drm/drm.ko.zst\n')
    (tmp_path / 'lib/modules/6.8.0-149-generic/modules.dep').write_text(
        'kernel/drivers/gpu/drm/nouveau/nouveau.ko.zst: kernel/drivers/gpu/drm/drm.ko.zst\n'
        'kernel/nvidia-580srv/nvidia.ko:\n')
    (tmp_path / 'lib/modules/6.8.0-149-generic/modules.builtin').write_text('kernel/drivers/nova_core_x.ko\n')
    assert _boot_kernels.module_listed(str(tmp_path), '7.0.0-1018-aws', 'nova_core') is True
    assert _boot_kernels.module_listed(str(tmp_path), '7.0.0-1018-aws', 'nova-core') is True
    assert _boot_kernels.module_listed(str(tmp_path), '6.8.0-149-generic', 'nova_core') is False
    assert _boot_kernels.module_listed(str(tmp_path), '6.8.0-149-generic', 'nvidia') is True
    assert _boot_kernels.module_listed(str(tmp_path), '6.8.0-150-generic', 'nova_core') is None    # nothing to read
    assert _boot_kernels.module_listed(str(tmp_path), '5.0.0-1-generic', 'nova_core') is None


def test_read_bounded_refuses_links_fifos_and_big_files(tmp_path):
    (tmp_path / 'big').write_bytes(b'x' * 11)
    (tmp_path / 'link').symlink_to(tmp_path / 'big')
    os.mkfifo(str(tmp_path / 'fifo'))
    assert _image_tree.read_bounded(str(tmp_path / 'big'), 11) == (b'x' * 11, None)
    assert _image_tree.read_bounded(str(tmp_path / 'big'), 10)[0] is None
    assert _image_tree.read_bounded(str(tmp_path / 'link'), 100)[0] is None
    assert _image_tree.read_bounded(str(tmp_path / 'fifo'), 100) == (None, '%s is not a regular file' % (tmp_path / 'fifo'))
    assert _image_tree.read_bounded(str(tmp_path / 'none'), 100) == (None, None)


@pytest.mark.parametrize('text,family', [
    ('NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"\n', 'Ubuntu'),
    ('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n', 'Debian'),
    ('ID=linuxmint\nID_LIKE="ubuntu debian"\n', 'Ubuntu'),
    ('ID=raspbian\nID_LIKE=debian\n', 'Debian'),
    ('ID="rocky"\nID_LIKE="rhel centos fedora"\n', ''),
    ('', ''), (None, ''), (b'\xff\xfeID=ubuntu', ''),
])
def test_os_family(text, family):
    assert _kernel_plan.os_family(text) == family


def test_package_names_skip_junk():
    assert _deb_control.package_names('linux-modules-nvidia-580-server-generic\nNot A Package\n\x1b[0m\nnvidia-dkms-580-server\n') \
        == {'linux-modules-nvidia-580-server-generic', 'nvidia-dkms-580-server'}


DPKG_QUERY_NOBLE = (
    'linux-image-6.8.0-149-generic\tinstall ok installed\tlinux-modules-6.8.0-149-generic\n'
    'linux-image-6.8.0-1052-aws\tinstall ok installed\tlinux-modules-6.8.0-1052-aws\n'
    'linux-image-generic\tinstall ok installed\tlinux-image-6.8.0-149-generic, linux-firmware, '
    'intel-microcode [amd64], amd64-microcode [amd64]\n'
    'linux-image-virtual\tinstall ok installed\tlinux-image-6.8.0-149-generic (= 6.8.0-149.149)\n'
    'linux-image-aws\tdeinstall ok config-files\tlinux-image-6.8.0-1052-aws (= 6.8.0-1052.55)\n'
    'linux-image-unsigned-6.8.0-1046-azure-fde\tinstall ok installed\t\n'
    'linux-image-azure-fde\tinstall ok installed\tlinux-image-unsigned-6.8.0-1046-azure-fde (= 6.8.0-1046.52) | '
    'linux-image-6.8.0-1046-azure-fde\n'
    'junk line without tabs\n'
)


def test_image_metapackages():
    releases = ['6.8.0-149-generic', '6.8.0-1052-aws', '6.8.0-1046-azure-fde', '7.0.0-1018-aws']
    assert _deb_control.image_metapackages(DPKG_QUERY_NOBLE, releases) == {
        '6.8.0-149-generic': 'linux-image-generic',            # generic wins over virtual: the kernel's own flavour
        '6.8.0-1046-azure-fde': 'linux-image-azure-fde',       # through the unsigned alternative
    }                                                           # linux-image-aws is removed: no metapackage


def test_image_metapackages_debian_cloud():
    text = ('linux-image-6.1.0-50-cloud-amd64\tinstall ok installed\tkmod, linux-base (>= 4.3~)\n'
            'linux-image-cloud-amd64\tinstall ok installed\tlinux-image-6.1.0-50-cloud-amd64 (= 6.1.148-1)\n')
    assert _deb_control.image_metapackages(text, ['6.1.0-50-cloud-amd64']) == {'6.1.0-50-cloud-amd64': 'linux-image-cloud-amd64'}
    assert _deb_control.image_metapackages(None, ['6.1.0-50-cloud-amd64']) == {}


def test_image_metapackages_ubuntu_core():
    """Ubuntu Core's linux-image-uc-generic depends on linux-image-uc-<release> (tests/unit/fixtures/kernel_updates)."""
    text = ('linux-image-uc-6.8.0-137-generic\tinstall ok installed\t\n'
            'linux-image-uc-generic\tinstall ok installed\tfirmware-sof-signed, linux-firmware, '
            'linux-image-uc-6.8.0-137-generic, linux-modules-extra-6.8.0-137-generic, wireless-regdb\n')
    assert _deb_control.image_metapackages(text, ['6.8.0-137-generic']) == {'6.8.0-137-generic': 'linux-image-uc-generic'}


def make_tree(root, files):
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return str(root)


BLACKLIST = b'blacklist nouveau\noptions nouveau modeset=0\n'
NAME = 'gpuops-blacklist-nouveau.conf'


def test_blacklist_state_current_in_main_archive(tmp_path):
    tree = make_tree(tmp_path, {'early/kernel/x86/microcode/AuthenticAMD.bin': b'\0',
                                'main/etc/modprobe.d/' + NAME: BLACKLIST})
    assert _initramfs.blacklist_state(tree, NAME, BLACKLIST)[0] == 'current'


def test_blacklist_state_stale_is_not_current(tmp_path):
    """Negative control: the same file with other bytes is stale."""
    tree = make_tree(tmp_path, {'main/etc/modprobe.d/' + NAME: b'blacklist nouveau\n'})
    state, reason = _initramfs.blacklist_state(tree, NAME, BLACKLIST)
    assert state == 'stale' and 'differs' in reason


def test_blacklist_state_top_level_missing_and_gone_from_disk(tmp_path):
    top = make_tree(tmp_path / 'a', {'etc/modprobe.d/' + NAME: BLACKLIST})
    assert _initramfs.blacklist_state(top, NAME, BLACKLIST)[0] == 'current'
    assert _initramfs.blacklist_state(top, NAME, None)[0] == 'stale'
    other = make_tree(tmp_path / 'b', {'main/etc/modprobe.d/other.conf': BLACKLIST, 'main/' + NAME: BLACKLIST})
    assert _initramfs.blacklist_state(other, NAME, BLACKLIST)[0] == 'missing'


def test_blacklist_state_does_not_follow_a_link_out_of_the_image(tmp_path):
    secret = tmp_path / 'host-file'
    secret.write_bytes(BLACKLIST)
    (tmp_path / 'tree/main/etc/modprobe.d').mkdir(parents=True)
    (tmp_path / 'tree/main/etc/modprobe.d' / NAME).symlink_to(secret)
    (tmp_path / 'tree/early').mkdir()
    (tmp_path / 'tree/early/etc').symlink_to(tmp_path / 'tree/main/etc')
    assert _initramfs.blacklist_state(str(tmp_path / 'tree'), NAME, BLACKLIST)[0] == 'missing'


# The plan. Package names as noble's restricted component has them (2026-12-03).

def kernel(release, running=False, headers=False):
    return {'release': release, 'running': running, 'headers_installed': headers}


NOBLE_KNOWN = {
    'linux-modules-nvidia-580-server-6.8.0-149-generic', 'linux-modules-nvidia-580-server-open-6.8.0-149-generic',
    'linux-modules-nvidia-580-server-6.8.0-151-generic', 'linux-modules-nvidia-580-server-generic',
    'linux-modules-nvidia-580-server-open-generic', 'linux-modules-nvidia-580-server-6.8.0-1052-aws',
    'linux-modules-nvidia-580-server-aws', 'linux-modules-nvidia-570-server-6.8.0-1046-azure-fde',
    'linux-modules-nvidia-575-server-open-6.8.0-1046-azure-fde', 'linux-modules-nvidia-550-6.8.0-1046-azure-fde',
    'linux-headers-6.8.0-149-generic', 'linux-headers-6.8.0-151-generic', 'linux-headers-generic',
    'linux-headers-6.8.0-1046-azure-fde', 'linux-headers-azure-fde', 'linux-headers-aws',
    'nvidia-dkms-580-server', 'nvidia-dkms-580-server-open',
}


def test_ubuntu_prebuilt_with_metapackage():
    result = _kernel_plan.plan([kernel('6.8.0-149-generic', running=True)], 'Ubuntu', '580', 'proprietary', 'auto',
                               NOBLE_KNOWN, {'6.8.0-149-generic': 'linux-image-generic'})
    assert result['refusals'] == []
    assert result['kernels'] == [{
        'release': '6.8.0-149-generic', 'source': 'prebuilt',
        'packages': ['linux-modules-nvidia-580-server-6.8.0-149-generic'],
        'why': result['kernels'][0]['why']}]
    assert result['packages'] == ['linux-modules-nvidia-580-server-6.8.0-149-generic']
    assert result['metapackages'] == ['linux-modules-nvidia-580-server-generic']
    assert result['dkms_package'] == ''
    why = result['kernels'][0]['why']
    assert 'linux-modules-nvidia-580-server-6.8.0-149-generic is in the archive' in why
    assert 'linux-modules-nvidia-580-server-generic follows the installed linux-image-generic' in why


def test_ubuntu_open_prebuilt_with_metapackage():
    result = _kernel_plan.plan([kernel('6.8.0-149-generic')], 'Ubuntu', '580', 'open', 'auto', NOBLE_KNOWN,
                               {'6.8.0-149-generic': 'linux-image-generic'})
    assert result['packages'] == ['linux-modules-nvidia-580-server-open-6.8.0-149-generic']
    assert result['metapackages'] == ['linux-modules-nvidia-580-server-open-generic']


def test_ubuntu_prebuilt_abi_without_an_installed_image_metapackage():
    """ubuntu-drivers gives no metapackage when no linux-image metapackage is installed: nor does the plan."""
    result = _kernel_plan.plan([kernel('6.8.0-1052-aws')], 'Ubuntu', '580', 'proprietary', 'auto', NOBLE_KNOWN, {})
    assert [(e['source'], e['packages']) for e in result['kernels']] == \
        [('prebuilt', ['linux-modules-nvidia-580-server-6.8.0-1052-aws'])]
    assert result['metapackages'] == [] and result['refusals'] == []
    assert 'no linux-image metapackage of this kernel is installed' in result['kernels'][0]['why']


def test_ubuntu_dkms_fallback_without_an_abi_package():
    result = _kernel_plan.plan([kernel('6.8.0-1046-azure-fde')], 'Ubuntu', '580', 'proprietary', 'auto', NOBLE_KNOWN,
                               {'6.8.0-1046-azure-fde': 'linux-image-azure-fde'})
    assert result['refusals'] == []
    assert result['kernels'][0]['source'] == 'dkms'
    assert result['packages'] == ['linux-headers-6.8.0-1046-azure-fde', 'nvidia-dkms-580-server']
    assert result['metapackages'] == ['linux-headers-azure-fde']
    assert result['dkms_package'] == 'nvidia-dkms-580-server'
    assert result['kernels'][0]['why'].startswith(
        'linux-modules-nvidia-580-server-6.8.0-1046-azure-fde is not in the archive, so nvidia-dkms-580-server '
        'builds the module against linux-headers-6.8.0-1046-azure-fde')


# noble-updates/restricted on 2026-12-04: the driver moved to 580.196.07, Canonical's 6.8.0-149-generic modules were
# still the ones built from 580.178.04 (only -lowlatency had a rebuild, 6.8.0-149.149.1+1).
NOBLE_CONTROL = """Package: linux-modules-nvidia-580-server-6.8.0-149-generic
Version: 6.8.0-149.149
Depends: debconf (>= 0.5) | debconf-2.0, linux-image-6.8.0-149-generic | linux-image-unsigned-6.8.0-149-generic,
 linux-objects-nvidia-580-server-6.8.0-149-generic (= 6.8.0-149.149), nvidia-kernel-common-580-server (>= 580.178.04)

Package: linux-modules-nvidia-580-server-open-6.8.0-149-generic
Version: 6.8.0-149.149
Depends: linux-image-6.8.0-149-generic | linux-image-unsigned-6.8.0-149-generic,
 nvidia-kernel-common-580-server (<= 580.178.04-1), nvidia-kernel-common-580-server (>= 580.178.04)

Package: linux-modules-nvidia-580-server-6.8.0-149-lowlatency
Version: 6.8.0-149.149.1+1
Depends: debconf (>= 0.5) | debconf-2.0, nvidia-kernel-common-580-server (>= 580.196.07)

Package: nvidia-kernel-common-580-server
Version: 580.196.07-0ubuntu0.24.04.1
Depends: lsb-release

Package: nvidia-kernel-common-580-server
Version: 580.178.04-0ubuntu0.24.04.1
"""
STALE = {'linux-modules-nvidia-580-server-6.8.0-149-generic': '580.178.04'}


def test_parse_control_and_built_with():
    control = _deb_control.parse_control(NOBLE_CONTROL)
    assert control['nvidia-kernel-common-580-server']['Version'] == '580.196.07-0ubuntu0.24.04.1'
    assert [_deb_control.built_with(control[n]['Depends'], '580') for n in sorted(control)[:3]] == [
        '580.178.04', '580.196.07', '580.178.04']
    assert _deb_control.built_with(control['nvidia-kernel-common-580-server']['Depends'], '580') == ''
    assert _deb_control.built_with(control['linux-modules-nvidia-580-server-6.8.0-149-generic']['Depends'], '58') == ''
    assert _deb_control.upstream_version('1:580.196.07-0ubuntu0.24.04.1') == '580.196.07'
    assert _deb_control.upstream_version('') == '' and _deb_control.upstream_version(None) == ''


def test_driver_versions_prefer_what_is_installed():
    candidates = _deb_control.parse_control(NOBLE_CONTROL)
    names = ['linux-modules-nvidia-580-server-6.8.0-149-generic', 'linux-modules-nvidia-580-server-6.8.0-149-lowlatency']
    assert _deb_control.driver_versions({}, candidates, 'nvidia-kernel-common-580-server', names, '580') == (
        '580.196.07-0ubuntu0.24.04.1', dict(zip(names, ['580.178.04', '580.196.07'])))
    # A host that installed 580.178.04 with the module a month ago keeps both (held): nothing is stale there.
    installed = _deb_control.parse_control('Package: nvidia-kernel-common-580-server\nStatus: hold ok installed\n'
                                           'Version: 580.178.04-0ubuntu0.24.04.1\n\n'
                                           'Package: linux-modules-nvidia-580-server-6.8.0-149-lowlatency\n'
                                           'Status: deinstall ok config-files\nVersion: 6.8.0-149.149.1\n'
                                           'Depends: nvidia-kernel-common-580-server (>= 580.126.20)\n')
    assert _deb_control.driver_versions(installed, candidates, 'nvidia-kernel-common-580-server', names, '580') == (
        '580.178.04-0ubuntu0.24.04.1', dict(zip(names, ['580.178.04', '580.196.07'])))


def test_ubuntu_prebuilt_module_of_another_driver_version_gets_dkms():
    """Booting Canonical's module of 580.178.04 with the 580.196.07 libraries gives "Driver/library version
    mismatch": the kernel gets DKMS instead, and the reason names both versions."""
    result = _kernel_plan.plan([kernel('6.8.0-149-generic')], 'Ubuntu', '580', 'proprietary', 'auto', NOBLE_KNOWN,
                               {'6.8.0-149-generic': 'linux-image-generic'}, driver_version='580.196.07-0ubuntu0.24.04.1',
                               prebuilt_built_with=STALE)
    assert result['refusals'] == []
    assert [(e['source'], e['packages']) for e in result['kernels']] == [
        ('dkms', ['nvidia-dkms-580-server', 'linux-headers-6.8.0-149-generic'])]
    assert result['metapackages'] == ['linux-headers-generic'] and result['dkms_package'] == 'nvidia-dkms-580-server'
    assert result['kernels'][0]['why'].startswith(
        'linux-modules-nvidia-580-server-6.8.0-149-generic in the archive is built from driver 580.178.04, not from '
        'the driver 580.196.07 the host gets: booting it would give "Driver/library version mismatch"')


def test_ubuntu_prebuilt_module_of_the_same_driver_version_is_taken():
    for version in ('580.178.04-0ubuntu0.24.04.1', ''):
        result = _kernel_plan.plan([kernel('6.8.0-149-generic')], 'Ubuntu', '580', 'proprietary', 'auto', NOBLE_KNOWN,
                                   {}, driver_version=version, prebuilt_built_with=STALE)
        assert [e['source'] for e in result['kernels']] == ['prebuilt'], version


def test_ubuntu_source_prebuilt_refuses_a_prebuilt_module_of_another_driver_version():
    result = _kernel_plan.plan([kernel('6.8.0-149-generic')], 'Ubuntu', '580', 'proprietary', 'prebuilt', NOBLE_KNOWN, {},
                               driver_version='580.196.07-0ubuntu0.24.04.1', prebuilt_built_with=STALE)
    assert result['kernels'] == [] and len(result['refusals']) == 1
    refusal = result['refusals'][0]
    assert refusal['kernel'] == '6.8.0-149-generic'
    assert 'built from driver 580.178.04, not from the driver 580.196.07' in refusal['message']
    assert refusal['fix'].startswith('Set nvidia_driver_module_source to auto or dkms')


def test_ubuntu_source_dkms_builds_even_where_a_prebuilt_module_exists():
    result = _kernel_plan.plan([kernel('6.8.0-149-generic')], 'Ubuntu', '580', 'open', 'dkms', NOBLE_KNOWN,
                               {'6.8.0-149-generic': 'linux-image-generic'})
    assert result['packages'] == ['linux-headers-6.8.0-149-generic', 'nvidia-dkms-580-server-open']
    assert result['metapackages'] == ['linux-headers-generic']
    assert result['kernels'][0]['why'].startswith('nvidia_driver_module_source is dkms')


def test_ubuntu_headers_gone_refusal():
    result = _kernel_plan.plan([kernel('6.8.0-31-generic')], 'Ubuntu', '580', 'proprietary', 'auto', NOBLE_KNOWN,
                               {'6.8.0-31-generic': 'linux-image-generic'})
    assert result['kernels'] == [] and result['packages'] == [] and result['dkms_package'] == ''
    [refusal] = result['refusals']
    assert refusal['kernel'] == '6.8.0-31-generic'
    assert refusal['message'].startswith('Headers for kernel 6.8.0-31-generic are not in the archive any more')
    assert 'apt-get install linux-image-generic linux-headers-generic' in refusal['fix']
    assert 'apt-get purge linux-image-6.8.0-31-generic' in refusal['fix']
    assert 'nvidia_driver_kernels' in refusal['fix']


def test_ubuntu_headers_gone_but_installed_is_no_refusal():
    """Negative control of the refusal above: headers on disk are enough for DKMS."""
    result = _kernel_plan.plan([kernel('6.8.0-31-generic', headers=True)], 'Ubuntu', '580', 'proprietary', 'auto',
                               NOBLE_KNOWN, {})
    assert result['refusals'] == []
    assert result['packages'] == ['nvidia-dkms-580-server']
    assert 'installed headers of kernel 6.8.0-31-generic' in result['kernels'][0]['why']


def test_ubuntu_source_prebuilt_refusal_names_the_other_branches():
    result = _kernel_plan.plan([kernel('6.8.0-1046-azure-fde')], 'Ubuntu', '580', 'proprietary', 'prebuilt', NOBLE_KNOWN, {})
    assert result['kernels'] == []
    [refusal] = result['refusals']
    assert refusal['kernel'] == '6.8.0-1046-azure-fde'
    assert refusal['message'] == (
        'Kernel 6.8.0-1046-azure-fde (flavour azure-fde) has no prebuilt NVIDIA 580 module: '
        'linux-modules-nvidia-580-server-6.8.0-1046-azure-fde is not in the archive; the archive has prebuilt '
        'modules for it from 575-server-open, 570-server, 550.')
    assert refusal['fix'] == (
        'Set nvidia_driver_branch to one of 570, or set nvidia_driver_module_source to dkms (or auto) to build '
        'the module with nvidia-dkms-580-server.')


def test_ubuntu_source_prebuilt_refusal_names_the_other_kernel_module():
    known = {'linux-modules-nvidia-580-server-open-7.0.0-1018-aws'}
    [refusal] = _kernel_plan.plan([kernel('7.0.0-1018-aws')], 'Ubuntu', '580', 'proprietary', 'prebuilt', known, {})['refusals']
    assert 'from 580-server-open' in refusal['message']
    assert refusal['fix'].startswith('Set nvidia_driver_kernel_module to open, or set nvidia_driver_module_source')


def test_ubuntu_source_prebuilt_refusal_without_any_branch():
    [refusal] = _kernel_plan.plan([kernel('7.0.0-1018-aws')], 'Ubuntu', '580', 'proprietary', 'prebuilt', set(), {})['refusals']
    assert 'no other branch has a prebuilt module for it either' in refusal['message']
    assert refusal['fix'].startswith('Set nvidia_driver_module_source to dkms')


def test_debian_dkms_with_the_cloud_headers_metapackage():
    known = {'linux-headers-6.1.0-50-cloud-amd64', 'linux-headers-cloud-amd64', 'linux-headers-amd64',
             'nvidia-tesla-535-kernel-dkms'}
    result = _kernel_plan.plan([kernel('6.1.0-50-cloud-amd64', running=True)], 'Debian', '535', 'proprietary', 'auto', known,
                               {'6.1.0-50-cloud-amd64': 'linux-image-cloud-amd64'}, dkms_package='nvidia-tesla-535-kernel-dkms')
    assert result['refusals'] == []
    assert result['kernels'][0]['source'] == 'dkms'
    assert result['packages'] == ['linux-headers-6.1.0-50-cloud-amd64', 'nvidia-tesla-535-kernel-dkms']
    assert result['metapackages'] == ['linux-headers-cloud-amd64']
    assert result['dkms_package'] == 'nvidia-tesla-535-kernel-dkms'
    assert 'Debian ships no prebuilt NVIDIA modules' in result['kernels'][0]['why']


def test_debian_default_dkms_packages():
    known = {'linux-headers-6.12.57+deb13-amd64'}
    for kernel_module, name in (('proprietary', 'nvidia-kernel-dkms'), ('open', 'nvidia-open-kernel-dkms')):
        result = _kernel_plan.plan([kernel('6.12.57+deb13-amd64')], 'Debian', '550', kernel_module, 'auto', known, {})
        assert result['packages'] == ['linux-headers-6.12.57+deb13-amd64', name]
        assert result['metapackages'] == []


def test_debian_source_prebuilt_refusal():
    result = _kernel_plan.plan([kernel('6.1.0-50-amd64')], 'Debian', '535', 'proprietary', 'prebuilt',
                               {'linux-headers-6.1.0-50-amd64'}, {})
    assert result['kernels'] == [] and result['packages'] == []
    [refusal] = result['refusals']
    assert refusal['kernel'] == '6.1.0-50-amd64'
    assert 'Debian ships no prebuilt NVIDIA kernel modules' in refusal['message']
    assert refusal['fix'].startswith('Set nvidia_driver_module_source to auto or dkms')


def test_two_kernels_with_different_outcomes():
    """The image's newest kernel is prebuilt; an older one falls back to DKMS; a third one is refused."""
    kernels = [kernel('6.8.0-149-generic', running=True), kernel('6.8.0-1046-azure-fde'), kernel('6.8.0-31-generic')]
    result = _kernel_plan.plan(kernels, 'Ubuntu', '580', 'proprietary', 'auto', NOBLE_KNOWN,
                               {'6.8.0-149-generic': 'linux-image-generic'})
    assert [(e['release'], e['source']) for e in result['kernels']] == \
        [('6.8.0-149-generic', 'prebuilt'), ('6.8.0-1046-azure-fde', 'dkms')]
    assert result['packages'] == ['linux-headers-6.8.0-1046-azure-fde',
                                  'linux-modules-nvidia-580-server-6.8.0-149-generic', 'nvidia-dkms-580-server']
    assert result['metapackages'] == ['linux-modules-nvidia-580-server-generic']
    assert result['dkms_package'] == 'nvidia-dkms-580-server'
    assert [r['kernel'] for r in result['refusals']] == ['6.8.0-31-generic']


def test_no_kernels():
    result = _kernel_plan.plan([], 'Ubuntu', '580', 'proprietary', 'auto', NOBLE_KNOWN, {})
    assert result['kernels'] == [] and result['packages'] == [] and result['metapackages'] == []
    [refusal] = result['refusals']
    assert refusal['kernel'] == ''
    assert 'no bootable kernel' in refusal['message']
    assert 'Install a kernel' in refusal['fix'] and 'nvidia_driver_kernels' in refusal['fix']


def test_unknown_family_is_a_refusal():
    [refusal] = _kernel_plan.plan([kernel('6.8.0-149-generic')], '', '580', 'proprietary', 'auto', set(), {})['refusals']
    assert 'Ubuntu and Debian only' in refusal['message']


def test_messages_are_plain_ascii():
    kernels = [kernel(r) for r in ('6.8.0-149-generic', '6.8.0-1046-azure-fde', '6.8.0-31-generic')]
    for family in ('Ubuntu', 'Debian'):
        for source in _kernel_plan.SOURCES:
            result = _kernel_plan.plan(kernels, family, '580', 'open', source, NOBLE_KNOWN, {})
            for text in [e['why'] for e in result['kernels']] + \
                    [r['message'] + r['fix'] for r in result['refusals']]:
                assert all(0x20 <= ord(c) < 0x7f for c in text), text


@pytest.mark.parametrize('args', [
    dict(branch='580; rm -rf /'), dict(branch=580), dict(kernel_module='closed'), dict(source='ppa'),
    dict(dkms_package='Bad Name'), dict(kernels=[{'release': '../../etc'}]), dict(kernels=['6.8.0-149-generic']),
])
def test_plan_refuses_arguments_no_caller_should_pass(args):
    call = dict(kernels=[kernel('6.8.0-149-generic')], family='Ubuntu', branch='580', kernel_module='proprietary',
                source='auto', known_packages=NOBLE_KNOWN, image_metapackages={})
    call.update(args)
    with pytest.raises(ValueError):
        _kernel_plan.plan(**call)


def _kernel(release, version='580.178.04', signer='Canonical Ltd. Kernel Module Signing', state='current', vermagic=None):
    return {'release': release, 'initramfs_blacklist': state, 'initramfs_reason': None,
            'module': {'filename': '/lib/modules/%s/kernel/nvidia-580srv/nvidia.ko' % release, 'version': version,
                       'vermagic': (vermagic or release) + ' SMP preempt mod_unload modversions', 'signer': signer}}


def test_check_passes_matching_modules():
    kernels = [_kernel('6.8.0-149-generic'), _kernel('6.8.0-1066-aws')]
    assert _modinfo.check(kernels, '580.178.04', ['6.8.0-149-generic'], 'Canonical Ltd. Kernel Module Signing') == []


def test_check_names_each_problem():
    kernels = [
        # An older cloud ABI whose prebuilt module came with an older driver (noble's 6.8.0-1052-aws: 580.126.20).
        _kernel('6.8.0-1052-aws', version='580.126.20'),
        _kernel('6.8.0-149-generic', vermagic='6.8.0-147-generic'),
        _kernel('6.8.0-149-lowlatency', signer='DKMS module signing key'),
        _kernel('6.8.0-150-generic', state='stale'),
        {'release': '6.8.0-151-generic', 'module': {}, 'initramfs_blacklist': 'current'},
    ]
    problems = _modinfo.check(kernels, '580.178.04', ['6.8.0-149-lowlatency'], 'Canonical Ltd. Kernel Module Signing')
    text = ' '.join(problems)
    assert 'kernel 6.8.0-1052-aws is version 580.126.20' in text and 'Driver/library version mismatch' in text
    assert 'was built for kernel 6.8.0-147-generic' in text
    assert 'signed by DKMS module signing key' in text
    assert 'initramfs of kernel 6.8.0-150-generic' in text
    assert 'Kernel 6.8.0-151-generic has no NVIDIA module' in text
    assert len(problems) == 5
    assert all(p.isascii() for p in problems)


def test_check_without_expectations_only_needs_a_module_and_its_vermagic():
    assert _modinfo.check([_kernel('6.1.0-50-cloud-amd64', version='535.309.01', signer='DKMS module signing key')]) == []


def test_first_build_error_quotes_the_compiler():
    log = ("make -C /lib/modules/7.0.0-10-generic/build M=/var/lib/dkms/nvidia/470.256.02/build\n"
           "  CC [M]  nvidia/nv.o\n"
           "/var/lib/dkms/nvidia/470.256.02/build/nvidia/nv.c:42:10: error: implicit declaration of function 'x'\n"
           "make[2]: *** [scripts/Makefile.build:243: nvidia/nv.o] Error 1\n")
    assert _dkms.first_build_error(log) == (
        "/var/lib/dkms/nvidia/470.256.02/build/nvidia/nv.c:42:10: error: implicit declaration of function 'x'")
    assert _dkms.first_build_error("all fine\n") == ''
    assert _dkms.first_build_error(None) == ''
    assert _dkms.first_build_error("x.c:1: error: \x1b[31mred\u00e9\n") == 'x.c:1: error: [31mred'


def test_build_log_kernel_reads_the_first_line_of_dkms_make_log():
    # The header Debian 12's dkms 3.0.10 wrote (a build's make.log, read 2026-12-05); dkms 2.x writes the same line.
    log = ("DKMS make.log for nvidia-current-535.309.01 for kernel 6.1.0-57-cloud-amd64 (x86_64)\n"
           "Sat Dec  5 09:10:21 UTC 2026\n")
    assert _dkms.build_log_kernel(log) == '6.1.0-57-cloud-amd64'
    # Negative controls: no header, a header-like line that names no kernel, no text.
    assert _dkms.build_log_kernel("make -C /lib/modules/6.1.0-57-cloud-amd64/build\n") == ''
    assert _dkms.build_log_kernel("DKMS make.log for nvidia-current-535.309.01\n") == ''
    assert _dkms.build_log_kernel(None) == ''


def test_newest_build_log_finds_dkms2_and_dkms3_layouts(tmp_path):
    old = tmp_path / 'var/lib/dkms/nvidia/535.309.01/build/make.log'
    new = tmp_path / 'var/lib/dkms/nvidia/580.178.04/6.8.0-149-generic/x86_64/log/make.log'
    for path, mtime in ((old, 1000), (new, 2000)):
        path.parent.mkdir(parents=True)
        path.write_text('log')
        os.utime(str(path), (mtime, mtime))
    assert _dkms.newest_build_log(str(tmp_path)) == str(new)
    assert _dkms.newest_build_log(str(tmp_path / 'nothing')) is None


MADISON_BOOKWORM = (
    'linux-headers-cloud-amd64 | 6.1.192-3 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages\n'
    'linux-headers-cloud-amd64 | 6.1.176-1 | http://deb.debian.org/debian bookworm/main amd64 Packages\n'
    'N: junk\n')


def test_parse_madison_and_installed_versions():
    assert _deb_control.parse_madison(MADISON_BOOKWORM) == {'linux-headers-cloud-amd64': ['6.1.192-3', '6.1.176-1']}
    assert _deb_control.parse_madison(b'\xff') == {} and _deb_control.parse_madison(None) == {}
    assert _deb_control.installed_versions('linux-image-cloud-amd64\tinstall ok installed\t6.1.176-1\n'
                                           'linux-image-amd64\tdeinstall ok config-files\t6.1.170-1\nbroken\n') == {
        'linux-image-cloud-amd64': '6.1.176-1'}


def _bookworm_plan():
    return {'metapackages': ['linux-headers-cloud-amd64'],
            'metapackage_images': {'linux-headers-cloud-amd64': 'linux-image-cloud-amd64'}, 'notes': []}


def test_pin_metapackages_takes_the_installed_generation():
    pinned = _kernel_plan.pin_metapackages(_bookworm_plan(), {'linux-image-cloud-amd64': '6.1.176-1'},
                                           _deb_control.parse_madison(MADISON_BOOKWORM))
    assert pinned['metapackages'] == ['linux-headers-cloud-amd64=6.1.176-1'] and pinned['notes'] == []


def test_pin_metapackages_keeps_an_installed_one_and_leaves_out_a_newer_generation():
    # Already installed: named alone (apt state present changes nothing).
    kept = _kernel_plan.pin_metapackages(_bookworm_plan(), {'linux-image-cloud-amd64': '6.1.170-1',
                                                            'linux-headers-cloud-amd64': '6.1.170-1'},
                                         _deb_control.parse_madison(MADISON_BOOKWORM))
    assert kept['metapackages'] == ['linux-headers-cloud-amd64']
    # Negative control: the archive has no version of the installed generation: installing the newest would install a
    # newer kernel too, so it is left out with a note.
    out = _kernel_plan.pin_metapackages(_bookworm_plan(), {'linux-image-cloud-amd64': '6.1.170-1'},
                                        _deb_control.parse_madison(MADISON_BOOKWORM))
    assert out['metapackages'] == []
    assert 'linux-headers-cloud-amd64 is left out' in out['notes'][0] and 'gpuops_upgrade_kernel=true' in out['notes'][0]


# Secure Boot: which DKMS modules the kernel would reject. mokutil 0.6.0's --test-key lines (mokutil.c test_key()).
PLAN_MIXED = [{'release': '6.8.0-1066-aws', 'source': 'prebuilt'}, {'release': '6.8.0-149-generic', 'source': 'dkms'},
              {'release': '6.8.0-151-generic', 'source': 'dkms'}]


@pytest.mark.parametrize('said,enrolled', [
    ('/var/lib/dkms/mok.pub is already enrolled\n', True),
    ('/var/lib/dkms/mok.pub is already in db\n', True),
    ('/var/lib/dkms/mok.pub is not enrolled\n', False),
    ('', False),
    (None, False),
])
def test_mok_enrolled_reads_mokutil(said, enrolled):
    assert _kernel_plan.mok_enrolled(said) is enrolled


def test_dkms_modules_with_an_unenrolled_key_are_refused_under_secure_boot():
    refusal = _kernel_plan.secure_boot_refusal(PLAN_MIXED, True, 'fail', '/var/lib/dkms/mok.pub',
                                               '/var/lib/dkms/mok.pub is not enrolled\n')
    assert refusal['kernel'] == '6.8.0-149-generic, 6.8.0-151-generic'
    assert refusal['message'].startswith('Secure Boot is enabled and kernels 6.8.0-149-generic, 6.8.0-151-generic get '
                                         'the NVIDIA module from DKMS')
    assert '6.8.0-1066-aws' not in refusal['message']  # Canonical's prebuilt module is signed with a trusted key
    assert 'mokutil --test-key: /var/lib/dkms/mok.pub is not enrolled' in refusal['message']
    assert 'Key was rejected by service' in refusal['message']
    # The two ways out, and the one a user may have taken by hand.
    assert refusal['fix'].startswith('Either disable Secure Boot in the firmware, or set nvidia_driver_secure_boot=enroll')
    assert 'mokutil --import /var/lib/dkms/mok.pub' in refusal['fix']
    assert refusal['message'].isascii() and refusal['fix'].isascii()


def test_a_missing_key_or_mokutil_is_not_taken_for_enrolled():
    refusal = _kernel_plan.secure_boot_refusal(PLAN_MIXED[1:2], True, 'fail', '/var/lib/shim-signed/mok/MOK.der', '')
    assert refusal['message'].startswith('Secure Boot is enabled and kernel 6.8.0-149-generic gets the NVIDIA module')
    assert 'no certificate yet, or no mokutil' in refusal['message']


@pytest.mark.parametrize('plan,secure_boot,mode,said', [
    (PLAN_MIXED, True, 'fail', '/var/lib/dkms/mok.pub is already enrolled'),   # the key is enrolled
    (PLAN_MIXED, True, 'fail', '/var/lib/dkms/mok.pub is already in db'),
    (PLAN_MIXED[:1], True, 'fail', ''),                                          # prebuilt only: Canonical-signed
    (PLAN_MIXED, False, 'fail', ''),                                             # Secure Boot off
    (PLAN_MIXED, True, 'enroll', ''),                                            # the role queues the key instead
    ([], True, 'fail', ''),
])
def test_nothing_is_refused_where_the_kernel_accepts_the_modules(plan, secure_boot, mode, said):
    assert _kernel_plan.secure_boot_refusal(plan, secure_boot, mode, '/var/lib/dkms/mok.pub', said) is None
