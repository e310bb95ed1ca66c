# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Issue 54: the task files build role_message's context from Ansible's own values (hostvars, registered results);
these plays run the tasks' expressions through ansible-playbook, where a type Ansible gives (a lazy hostvars entry,
a string for a number) would reach the filter."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

REPORT = '''
- hosts: all
  gather_facts: false
  tasks:
    - name: The outcome of two hosts of three
      ansible.builtin.set_fact:
        upgrade_driver_outcome: "{{ {'a': {'status': 'upgraded', 'from': '535.261.03', 'to': '550.163.01'},
                                     'b': {'status': 'already', 'from': '550.163.01', 'to': '550.163.01'}}[inventory_hostname] }}"
      when: inventory_hostname != 'c'

    - name: Print one line per host of the run
      ansible.builtin.include_role:
        name: gpuops.gpu_server.upgrade_driver
        tasks_from: report

    - name: Keep what the report printed
      ansible.builtin.copy:
        dest: "%(out)s"
        content: >-
          {{ {'hosts': ansible_play_hosts_all}
             | gpuops.gpu_server.role_message('upgrade_driver_report', hostvars=hostvars) | to_json }}
      delegate_to: localhost
      run_once: true
'''
INVENTORY = '''
all:
  hosts:
    a: {ansible_connection: local, ansible_python_interpreter: "%(python)s"}
    b: {ansible_connection: local, ansible_python_interpreter: "%(python)s"}
    c: {ansible_connection: local, ansible_python_interpreter: "%(python)s"}
'''


def test_the_upgrade_report_reads_every_host_and_says_not_run(ansible_play):
    proc, got = ansible_play(REPORT, inventory=INVENTORY)
    assert proc.returncode == 0, proc.stdout
    assert got == ['a: upgraded 535.261.03 -> 550.163.01', 'b: already 550.163.01', 'c: not run'], proc.stdout
    assert '"c: not run"' in proc.stdout, proc.stdout


UNADDRESSED = '''
- hosts: localhost
  gather_facts: false
  tasks:
    - name: The slurm question, as its task builds it
      ansible.builtin.copy:
        dest: "%(out)s"
        content: "{{ {'interface': slurm_interface, 'variable': 'slurm_interface'}
                     | gpuops.gpu_server.role_message('cluster_unaddressed') | to_json }}"
'''


def test_an_interface_given_as_a_number_or_with_a_line_break_is_shown_on_one_line(ansible_play):
    proc, got = ansible_play(UNADDRESSED, {'slurm_interface': 'ib0\nFORGED'})
    assert proc.returncode == 0, proc.stdout
    assert got == 'Is ib0\\nFORGED (slurm_interface) up with an IPv4 address on each of them?'
    proc, got = ansible_play(UNADDRESSED, {'slurm_interface': ['ib0']})
    assert proc.returncode != 0 and got is None
    assert "role_message: cluster_unaddressed: interface must be a string or a number, got ['ib0']" in proc.stdout, proc.stdout


def _task(path, name):
    """The task NAME of the role file PATH (in blocks too), as YAML text of one task that copies its message to out."""
    import os
    import yaml
    from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

    def find(tasks):
        for task in tasks or []:
            if task.get('name') == name:
                return task
            for key in ('block', 'rescue', 'always'):
                found = find(task.get(key))
                if found:
                    return found
        return None
    with open(os.path.join(ROOT, path)) as handle:
        task = find(yaml.safe_load(handle))
    assert task, (path, name)
    action = next(k for k in task if k.startswith('ansible.builtin.'))
    message = task[action].get('msg') or task[action].get('fail_msg')
    copy = {'name': name, 'vars': task.get('vars', {}),
            'ansible.builtin.copy': {'dest': '%(out)s', 'content': '{{ __message | to_json }}'}}
    copy['vars']['__message'] = message
    return yaml.safe_dump([copy], sort_keys=False).replace('\n', '\n    ')


PLAY = '''
- hosts: localhost
  gather_facts: false
  tasks:
    %s
'''
KERNELS = {'running': '6.1.0-40-cloud-amd64', 'new_kernels': ['6.1.0-41-cloud-amd64'], 'newest_installed': None,
           'newest_after': '6.1.0-41-cloud-amd64', 'metapackages': ['linux-image-cloud-amd64'], 'refusal': None,
           'upgrades': [{'name': 'linux-image-cloud-amd64', 'from': '6.1.158-1', 'to': '6.1.159-1'}]}
PLAN_VARS = dict(_upgrade_driver_from='535.261.03', _upgrade_driver_branch='550', _upgrade_driver_branch_number='550',
                 upgrade_driver_kernel=True, _upgrade_driver_in_container=False, upgrade_driver_reboot=True,
                 upgrade_driver_acceptance=False, __upgrade_driver_kernels=KERNELS,
                 __upgrade_driver_before={'status': 'pass'}, _upgrade_driver_drain_plan='no drain',
                 upgrade_driver_wait_timeout=600)


def test_the_plan_task_builds_its_context_from_ansible_values(ansible_play):
    proc, got = ansible_play(PLAY % _task('roles/upgrade_driver/tasks/upgrade.yml', 'Show the plan for the host'),
                             PLAN_VARS)
    assert proc.returncode == 0, proc.stdout
    assert got == ("PLAN localhost: driver 535.261.03 -> branch 550; kernel 6.1.0-40-cloud-amd64 -> new kernel "
                   "6.1.0-41-cloud-amd64 (linux-image-cloud-amd64 6.1.158-1 -> 6.1.159-1); health before pass; no drain; "
                   "wait up to 600 s for the GPUs' compute processes; upgrade linux-image-cloud-amd64 (the driver packages "
                   "stay held); nvidia_driver role (a module for every bootable kernel; reboot when the new module needs "
                   "it); reboot into 6.1.0-41-cloud-amd64 when it is not the running kernel; after: loaded driver on 550, "
                   "running kernel 6.1.0-41-cloud-amd64, gpu_health; then undrain.")


def test_the_kernel_refusal_task_builds_its_context_from_ansible_values(ansible_play):
    extra = dict(__upgrade_driver_kernels=KERNELS, _upgrade_driver_from='535.274.02',
                 _upgrade_driver_module_branches=[{'key': 'linux-modules-nvidia-580-server-6.8.0-151-generic', 'value': '580'}])
    proc, got = ansible_play(PLAY % _task('roles/upgrade_driver/tasks/before.yml',
                                          'Fail a host whose kernel update apt refuses (not drained, nothing changed)'), extra)
    assert proc.returncode == 0, proc.stdout
    assert got.startswith("KERNEL UPDATE REFUSED on localhost: the new kernel's prebuilt NVIDIA module "
                          "(linux-modules-nvidia-580-server-6.8.0-151-generic) is branch 580, the driver is 535.274.02."), got


def test_the_driver_state_task_builds_its_context_from_ansible_values(ansible_play):
    extra = dict(_nvidia_driver_installed_version='', _nvidia_driver_source='distribution', _nvidia_driver_userspace_only=True,
                 nvidia_driver_kernel_module='open', nvidia_driver_hold=True, nvidia_driver_bake=False,
                 _nvidia_driver_reboot_pending=False, _nvidia_driver_in_container=True,
                 ansible_facts={'virtualization_type': 'docker'})
    proc, got = ansible_play(PLAY % _task('roles/nvidia_driver/tasks/verify.yml', "Report the driver's state"), extra)
    assert proc.returncode == 0, proc.stdout
    assert ' '.join(got.split()) == (
        "NVIDIA driver (not installed yet: check mode) from distribution (user-space parts only), held. No driver loaded "
        "(driver_loaded false) in this docker container, whose kernel belongs to the host: not read in check mode"), got
