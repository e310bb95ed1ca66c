# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nvidia_driver's reboot decision (tasks/reboot.yml) with a fake modprobe: a module the kernel accepts but that finds
no GPU ("No such device") never makes a reboot pending, so the role cannot reboot in a loop on a host without a GPU it
can drive; a module the running kernel lacks does (the negative control). The play runs on localhost, where the role
never reboots anyway (a local connection): what is asserted is the decision."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest

PLAYBOOK = '''
- hosts: localhost
  gather_facts: false
  environment:
    PATH: "%(dir)s/bin:/usr/sbin:/usr/bin:/sbin:/bin"
  tasks:
    - ansible.builtin.include_role:
        name: gpuops.gpu_server.nvidia_driver
        tasks_from: reboot
        public: true
    - ansible.builtin.copy:
        dest: "%(out)s"
        content: "{{ {'pending': _nvidia_driver_reboot_pending, 'no_device': _nvidia_driver_no_device,
                      'blocked_by': _nvidia_driver_reboot_blocked_by | default(''),
                      'daemons_start': _nvidia_driver_daemons_start | bool} | to_json }}"
'''
EXTRA = {'_nvidia_driver_live': True, '_nvidia_driver_pci_gpus': [{'pci_bus_id': '0000:18:00.0', 'kind': 'gpu'}],
         '_nvidia_driver_installed_version': '535.309.01', 'nvidia_driver_reboot': True}


def fake_modprobe(directory, stderr):
    os.makedirs(os.path.join(str(directory), 'bin'), exist_ok=True)
    path = os.path.join(str(directory), 'bin', 'modprobe')
    with open(path, 'w') as f:
        f.write("#!/bin/sh\necho \"%s\" >&2\nexit 1\n" % stderr)
    os.chmod(path, 0o755)


@pytest.mark.skipif(os.path.exists('/proc/driver/nvidia/version'), reason='this machine has an NVIDIA driver loaded')
def test_no_such_device_is_reported_and_never_reboots(ansible_play):
    fake_modprobe(ansible_play.dir, "modprobe: ERROR: could not insert 'nvidia': No such device")
    proc, out = ansible_play(PLAYBOOK, extra=EXTRA)
    assert proc.returncode == 0, proc.stdout
    # Nor do the daemons start (tasks/service.yml): nvidia-persistenced would fail without a GPU and hide the reason.
    assert out == {'pending': False, 'no_device': True, 'blocked_by': '', 'daemons_start': False}
    assert 'No module can load without a GPU it supports, so this run does not reboot' in proc.stdout.replace('\n', ' ')


@pytest.mark.skipif(os.path.exists('/proc/driver/nvidia/version'), reason='this machine has an NVIDIA driver loaded')
def test_a_module_the_running_kernel_lacks_makes_a_reboot_pending(ansible_play):
    # Negative control: the same play, with the error of a kernel that has no module of the installed driver.
    fake_modprobe(ansible_play.dir, 'modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.1.0-50-cloud-amd64')
    proc, out = ansible_play(PLAYBOOK, extra=EXTRA)
    assert proc.returncode == 0, proc.stdout
    assert out['pending'] is True and out['no_device'] is False and out['daemons_start'] is False
    assert out['blocked_by'] == 'the connection is local (the play would reboot its own controller)'
    assert 'needs a reboot: the installed driver is 535.309.01' in proc.stdout.replace('\n', ' ')


@pytest.mark.skipif(os.path.exists('/proc/driver/nvidia/version'), reason='this machine has an NVIDIA driver loaded')
def test_a_module_that_loads_the_installed_driver_starts_the_daemons(ansible_play):
    # The third outcome: modprobe loads the module and /proc/driver/nvidia/version (a fake cat) names the installed
    # driver: nothing pending, and the daemons start.
    directory = str(ansible_play.dir)
    os.makedirs(os.path.join(directory, 'bin'), exist_ok=True)
    for name, text in (('modprobe', '#!/bin/sh\nexit 0\n'),
                       ('cat', '#!/bin/sh\nif [ "$1" = /proc/driver/nvidia/version ]; then\n'
                               '  echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.309.01  Thu Sep 25 2025"\n'
                               '  exit 0\nfi\nexec /bin/cat "$@"\n')):
        path = os.path.join(directory, 'bin', name)
        with open(path, 'w') as f:
            f.write(text)
        os.chmod(path, 0o755)
    proc, out = ansible_play(PLAYBOOK, extra=EXTRA)
    assert proc.returncode == 0, proc.stdout
    assert out == {'pending': False, 'no_device': False, 'blocked_by': '', 'daemons_start': True}
