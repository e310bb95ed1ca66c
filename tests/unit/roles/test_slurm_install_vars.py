# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""slurm's packages and directories have one home (vars/main.yml, installed by tasks/packages.yml and created by
tasks/directories.yml), for a host's part in the cluster and for the CLOUD nodes' image (tasks/cloud_image.yml, which
imports both with _slurm_image true): templated by Ansible on an inventory, and held in place statically."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT
from ansible_collections.gpuops.gpu_server.tests.support.tasks import role_task_files, walk

PLAYBOOK = '''
- hosts: all
  gather_facts: false
  # Below task vars, as a role's vars are (include_vars would outrank the task's _slurm_image).
  vars_files:
    - "%(root)s/roles/slurm/defaults/main.yml"
    - "%(root)s/roles/slurm/vars/main.yml"
  tasks:
    - name: The host's part in the cluster
      ansible.builtin.copy:
        dest: "%(dir)s/{{ inventory_hostname }}.json"
        content: "{{ {'packages': _slurm_packages, 'directories': _slurm_directories} | to_json }}"
        mode: "0644"
    - name: The node image (as tasks/cloud_image.yml imports packages.yml and directories.yml)
      ansible.builtin.copy:
        dest: "%(dir)s/{{ inventory_hostname }}-image.json"
        content: "{{ {'packages': _slurm_packages, 'directories': _slurm_directories} | to_json }}"
        mode: "0644"
      vars:
        _slurm_image: true
'''

INVENTORY = '''
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: "%(python)s"
  hosts:
    builder: {}
  children:
    slurm_controller:
      hosts:
        ctl: {}
        both: {}
    slurm_compute:
      hosts:
        c1: {}
        both: {}
'''
LOG = {'path': '/var/log/slurm', 'owner': 'slurm'}
CONFIG = {'path': '/etc/slurm', 'owner': 'root'}
STATE = {'path': '/var/lib/slurm/slurmctld', 'owner': 'slurm'}
SPOOL = {'path': '/var/lib/slurm/slurmd', 'owner': 'root'}
IMAGE_DIRS = [LOG, SPOOL, {'path': '/var/lib/gpuops', 'owner': 'root'},
              {'path': '/etc/systemd/system/slurmd.service.d', 'owner': 'root'}]


def render(ansible_play, **extra):
    proc, _output = ansible_play(PLAYBOOK, extra, inventory=INVENTORY, root=ROOT)
    assert proc.returncode == 0, proc.stdout
    return {name + suffix: json.loads((ansible_play.dir / ('%s%s.json' % (name, suffix))).read_text())
            for name in ('builder', 'ctl', 'c1', 'both') for suffix in ('', '-image')}


def test_each_host_installs_and_creates_what_its_part_needs_and_the_image_a_compute_nodes(ansible_play):
    got = render(ansible_play)
    assert got['ctl']['packages'] == ['slurmctld', 'slurm-client', 'munge', 'libpmix-dev']
    assert got['c1']['packages'] == ['slurmd', 'slurm-client', 'munge', 'libpmix-dev']
    assert got['both']['packages'] == ['slurmctld', 'slurm-client', 'munge', 'slurmd', 'libpmix-dev']
    assert got['builder']['packages'] == ['libpmix-dev']
    assert got['ctl']['directories'] == [CONFIG, LOG, STATE]
    assert got['both']['directories'] == [CONFIG, LOG, STATE]
    assert got['c1']['directories'] == [CONFIG, LOG, SPOOL]

    for host in ('builder', 'ctl', 'c1', 'both'):
        assert got[host + '-image']['packages'] == ['slurmd', 'slurm-client', 'munge', 'libpmix-dev'], host
        assert got[host + '-image']['directories'] == IMAGE_DIRS, host


def test_pmix_only_where_it_is_the_mpi_default(ansible_play):
    got = render(ansible_play, slurm_mpi_default='none')
    assert got['c1']['packages'] == ['slurmd', 'slurm-client', 'munge']
    assert got['c1-image']['packages'] == ['slurmd', 'slurm-client', 'munge']


def test_the_lists_are_read_in_one_place_each():
    """Only vars/main.yml names the package lists; only packages.yml installs them and only directories.yml creates
    Slurm's directories; install.yml and configure.yml import them, and cloud_image.yml with _slurm_image true."""
    files = {path: data for path, data in role_task_files(ROOT).items() if path.startswith('roles/slurm/')}
    for path, data in files.items():
        text = json.dumps(data)
        for name in ('_slurm_controller_packages', '_slurm_compute_packages', '_slurm_pmix_packages',
                     '_slurm_spool_dir', '_slurm_state_dir', '_slurm_log_dir', '_slurm_packages"',
                     '_slurm_directories'):
            if name in text:
                assert (path, name) in {('roles/slurm/tasks/packages.yml', '_slurm_packages"'),
                                        ('roles/slurm/tasks/directories.yml', '_slurm_directories')}, (path, name)
    imports = {}
    for path, data in files.items():
        for task in walk(data):
            target = task.get('ansible.builtin.import_tasks')
            if target in ('packages.yml', 'directories.yml'):
                imports.setdefault(target, {})[path] = task.get('vars') or {}
    assert imports == {
        'packages.yml': {'roles/slurm/tasks/install.yml': {},
                         'roles/slurm/tasks/cloud_image.yml': {'_slurm_image': True}},
        'directories.yml': {'roles/slurm/tasks/configure.yml': {},
                            'roles/slurm/tasks/cloud_image.yml': {'_slurm_image': True}},
    }
