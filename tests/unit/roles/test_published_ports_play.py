# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""site.yml computes the published ports (gpuops_firewall_ports) in one play, through the firewall role's entry point
ports, with exactly the semantics of the four plays it replaced (kept below as REFERENCE, as release 1.0.0 had them):
which hosts get which ports, where facts are gathered (Slurm's play gathered them for a controller in no other group),
gpuops_skip_roles and the group-name overrides (gpuops_*_hosts).

Both are run by Ansible on the same sample inventory (every host this machine, through the local connection), after
site.yml's first play (its fact gathering; the base role left out), and every host's gpuops_firewall_ports and whether
it has facts are compared. Negative control: the new play with a publisher's hosts widened and Slurm's fact gathering
dropped gives results that the comparison flags, host by host.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import json
import sys

import pytest
import yaml

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT, needs_ansible_playbook, run_playbook

pytestmark = needs_ansible_playbook

SITE = ROOT + '/playbooks/site.yml'

# The first play's task and the three plays of release 1.0.0 (playbooks/site.yml, lines 22-78), become left out.
REFERENCE = '''
- name: Prepare the base system of every server
  hosts: "{{ gpuops_gpu_hosts | default('gpu_servers') }}:{{ gpuops_monitoring_hosts | default('monitoring') }}"
  tasks:
    - name: Compute the ports the GPU exporters will listen on (gpuops_firewall_ports, for hardening's firewall)
      ansible.builtin.include_role:
        name: gpuops.gpu_server.gpu_monitoring
        tasks_from: ports
        apply:
          tags: [always]
      when: "'gpu_monitoring' not in gpuops_skip_roles | default([])"
      tags: [always]
- name: Compute the port JupyterLab will serve on (gpuops_firewall_ports, for hardening's firewall)
  hosts: "{{ gpuops_jupyter_hosts | default(gpuops_gpu_hosts | default('gpu_servers')) }}"
  gather_facts: false
  tasks:
    - name: Compute the port JupyterLab will serve on
      ansible.builtin.include_role:
        name: gpuops.gpu_server.jupyter
        tasks_from: ports
        apply:
          tags: [always]
      when: "'jupyter' not in gpuops_skip_roles | default([])"
      tags: [always]
- name: Compute the training cluster's ports (gpuops_firewall_ports, for hardening's firewall)
  hosts: "{{ gpuops_training_hosts | default('training_cluster') }}"
  gather_facts: false
  tasks:
    - name: Compute the training cluster's ports
      ansible.builtin.include_role:
        name: gpuops.gpu_server.training_cluster
        tasks_from: ports
        apply:
          tags: [always]
      when: "'training_cluster' not in gpuops_skip_roles | default([])"
      tags: [always]
- name: Compute Slurm's ports (gpuops_firewall_ports, for hardening's firewall)
  hosts: "{{ gpuops_slurm_controller_hosts | default('slurm_controller') }}:{{ gpuops_slurm_compute_hosts | default('slurm_compute') }}"
  tasks:
    - name: Compute Slurm's ports
      ansible.builtin.include_role:
        name: gpuops.gpu_server.slurm
        tasks_from: ports
        apply:
          tags: [always]
      when: "'slurm' not in gpuops_skip_roles | default([])"
      tags: [always]
'''

REPORT = '''
- name: Report every host's published ports and whether it has facts
  hosts: all
  gather_facts: false
  tasks:
    - name: Write the report
      ansible.builtin.copy:
        dest: "%s/{{ inventory_hostname }}.json"
        content: "{{ {'ports': gpuops_firewall_ports | default(None), 'distribution': ansible_facts['distribution'] | default(None)} | to_json }}"
        mode: "0644"
      delegate_to: localhost
'''

# Group names: the defaults, and the same inventory with every group renamed through the gpuops_*_hosts overrides.
GROUPS = ['gpu_servers', 'monitoring', 'jupyter', 'training_cluster', 'slurm_controller', 'slurm_compute']
RENAMED = {'gpu_servers': 'gpus', 'monitoring': 'mon', 'jupyter': 'lab', 'training_cluster': 'train',
           'slurm_controller': 'sctl', 'slurm_compute': 'scomp'}
OVERRIDES = {'gpuops_gpu_hosts': 'gpus', 'gpuops_monitoring_hosts': 'mon', 'gpuops_jupyter_hosts': 'lab',
             'gpuops_training_hosts': 'train', 'gpuops_slurm_controller_hosts': 'sctl',
             'gpuops_slurm_compute_hosts': 'scomp'}


def inventory(tmp_path, names):
    """gpu1-3 GPU servers (gpu2 in the training cluster), mon1 the monitoring server, ctl1 a Slurm controller in no
    other group, other1 in none of site.yml's groups; gpu2 skips jupyter, gpu3 skips gpu_monitoring. Every host is this
    machine, so one training member and one Slurm host (two would share its host name, which those roles refuse), each
    with an address of its own."""
    members = {'gpu_servers': ['gpu1', 'gpu2', 'gpu3'], 'monitoring': ['mon1'], 'jupyter': ['gpu1', 'gpu2'],
               'training_cluster': ['gpu2'], 'slurm_controller': ['ctl1'], 'slurm_compute': []}
    hosts = {'gpu1': 11, 'gpu2': 12, 'gpu3': 13, 'mon1': 21, 'ctl1': 31, 'other1': 41}
    children = {names.get(group, group): {'hosts': {h: None for h in members[group]} or None} for group in GROUPS}
    children['other'] = {'hosts': {'other1': None}}
    host_vars = {h: {'ansible_host': '127.0.0.%d' % n, 'slurm_address': '198.51.100.%d' % n, 'training_cluster_address':
                     '198.51.100.%d' % n} for h, n in hosts.items()}
    host_vars['gpu2']['gpuops_skip_roles'] = ['jupyter']
    host_vars['gpu3']['gpuops_skip_roles'] = ['gpu_monitoring']
    group_vars = {'jupyter_listen': '0.0.0.0', 'training_cluster_firewall_sources': ['10.9.0.0/16'],
                  'slurm_firewall_sources': ['10.8.0.0/16'], 'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}
    if names:
        # The roles find their peers through their own group variables.
        group_vars.update({'gpu_monitoring_server_group': names['monitoring'], 'gpu_monitoring_node_group': names['gpu_servers'],
                           'training_cluster_group': names['training_cluster'],
                           'slurm_controller_group': names['slurm_controller'], 'slurm_compute_group': names['slurm_compute']})
    path = tmp_path / 'inventory.yml'
    path.write_text(yaml.safe_dump({'all': {'hosts': host_vars, 'vars': group_vars, 'children': children}}))
    return path


def site_plays():
    with open(SITE) as handle:
        return yaml.safe_load(handle)


def ports_includes(plays):
    """(play name, task name, role) of every task in PLAYS that includes a role's entry point ports."""
    found = []
    for play in plays:
        for task in play.get('tasks', []) + play.get('pre_tasks', []) + play.get('post_tasks', []):
            include = task.get('ansible.builtin.include_role') or task.get('ansible.builtin.import_role') or {}
            if include.get('tasks_from') == 'ports':
                found.append((play['name'], task['name'], include['name']))
    return found


def new_plays(mutate=None):
    """site.yml's base play (its fact gathering: the base role and become left out) and its ports play. The vendor
    play before it gathers no facts and changes nothing."""
    plays = site_plays()
    base = [play for play in plays if any('gpuops.gpu_server.base' in str(role) for role in play.get('roles', []))]
    assert len(base) == 1
    first = {key: value for key, value in base[0].items() if key not in ('roles', 'become')}
    ports = [copy.deepcopy(play) for play in plays if ports_includes([play])]
    assert len(ports) == 1
    if mutate:
        mutate(ports[0]['tasks'][0]['vars']['firewall_port_publishers'])
    return [first] + ports


def run(tmp_path, tag, plays_text, names, extra=()):
    out = tmp_path / tag
    out.mkdir()
    playbook = tmp_path / ('%s.yml' % tag)
    playbook.write_text(plays_text + REPORT % out)
    args = ['-e', json.dumps(OVERRIDES)] if names else []
    # A fact cache of this run only: the checkout's ansible.cfg keeps facts on disk for an hour (gathering = smart).
    proc = run_playbook(playbook, *(args + list(extra)), inventory=inventory(tmp_path, names), local=False, timeout=600,
                        env={'ANSIBLE_CACHE_PLUGIN': 'memory', 'ANSIBLE_FORKS': '2'})
    assert proc.returncode == 0, proc.stdout[-8000:]
    report = {path.stem: json.loads(path.read_text()) for path in out.iterdir()}
    return {host: {'ports': None if got['ports'] is None else sorted(json.dumps(p, sort_keys=True) for p in got['ports']),
                   'facts': got['distribution'] is not None}
            for host, got in report.items()}, proc.stdout


def differences(reference, got):
    return {host: (reference.get(host), got.get(host)) for host in set(reference) | set(got)
            if reference.get(host) != got.get(host)}


def test_site_yml_has_one_ports_mechanism():
    assert ports_includes(site_plays()) == [('Compute the ports that the roles publish (gpuops_firewall_ports, for the '
                                             'firewall)', 'Compute the ports that the roles publish',
                                             'gpuops.gpu_server.firewall')]
    # Negative control: the plays it replaced are four.
    assert [role for dummy, dummy2, role in ports_includes(yaml.safe_load(REFERENCE))] == [
        'gpuops.gpu_server.gpu_monitoring', 'gpuops.gpu_server.jupyter', 'gpuops.gpu_server.training_cluster',
        'gpuops.gpu_server.slurm']


@pytest.fixture(scope='module')
def reference(tmp_path_factory):
    """The four plays of release 1.0.0 on the sample inventory, with the default group names."""
    return run(tmp_path_factory.mktemp('reference'), 'reference', REFERENCE, {})[0]


def test_the_sample_is_not_vacuous(reference):
    # Ports where each role publishes, none where it is skipped or the host is outside; facts for the Slurm controller.
    assert reference['other1'] == {'ports': None, 'facts': False}
    assert reference['ctl1']['facts'] and any('10.8.0.0/16' in p for p in reference['ctl1']['ports'])
    assert any('8888' in p for p in reference['gpu1']['ports'])
    assert not any('8888' in p for p in reference['gpu2']['ports'])
    assert any('29500' in p for p in reference['gpu2']['ports'])
    # In the play, but no GPU node: since the node/server split gpu_monitoring publishes on the node group only.
    assert reference['mon1']['ports'] is None
    assert reference['gpu3']['ports'] == [p for p in reference['gpu1']['ports'] if '8888' in p]


def test_the_one_play_publishes_what_the_four_did(tmp_path, reference):
    got = run(tmp_path, 'new', yaml.safe_dump(new_plays()), {})[0]
    assert differences(reference, got) == {}


def test_the_group_name_overrides_choose_the_hosts(tmp_path, reference):
    # The same inventory, its groups renamed and named by the gpuops_*_hosts overrides, publishes the same ports, but
    # on gpu3: the JupyterLab hosts are now the group lab (gpu1, gpu2), no longer every GPU server, and gpu3 skips
    # gpu_monitoring, so nothing publishes for it.
    got = run(tmp_path, 'renamed', yaml.safe_dump(new_plays()), RENAMED)[0]
    assert differences(reference, got) == {'gpu3': (reference['gpu3'], {'ports': None, 'facts': True})}
    assert reference['gpu3']['ports'] == ['{"port": 8888, "proto": "tcp", "sources": []}']


def test_the_comparison_flags_another_mechanism(tmp_path, reference):
    def widen(publishers):
        for publisher in publishers:
            if publisher['role'] == 'jupyter':
                publisher['hosts'] = "gpu_servers:monitoring"
            publisher.pop('gather_facts', None)
    got = run(tmp_path, 'mutated', yaml.safe_dump(new_plays(widen)), {})[0]
    flagged = differences(reference, got)
    # Jupyter widened: 8888 on the monitoring server; no fact gathering for Slurm: the controller has none.
    assert set(flagged) == {'mon1', 'ctl1'}, flagged
    assert any('8888' in p for p in flagged['mon1'][1]['ports'])
    assert flagged['ctl1'][1]['facts'] is False
