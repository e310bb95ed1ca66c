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
