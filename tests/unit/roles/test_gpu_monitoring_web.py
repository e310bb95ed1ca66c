# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu_monitoring's endpoint security, templated by Ansible without a host: the firewall sources computed from the
inventory, Prometheus' https + basic-auth client settings, and Grafana's TLS settings and data source (Grafana cannot
be installed here: apt.grafana.com is not reachable, so this is what checks its templates)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import yaml

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

ROLE = os.path.join(ROOT, 'roles', 'gpu_monitoring_server')

INVENTORY = '''
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: %(python)s
  children:
    gpu_servers:
      hosts:
        node-1: {ansible_host: node-1.example.com}
        node-2: {ansible_host: 10.0.0.12}
    monitoring:
      hosts:
        mon-1: {ansible_host: 10.0.0.5}
        mon-2: {ansible_host: mon-2.example.com}
'''

PLAYBOOK = '''
- hosts: node-1
  gather_facts: false
  tasks:
    # mon-2 is known by name: its address comes from its gathered facts (faked here).
    - ansible.builtin.set_fact:
        ansible_default_ipv4: {address: 10.0.0.6}
        cacheable: true
      delegate_to: mon-2
      delegate_facts: true
    # The node's platform (node_exporter's flag names differ by version), Debian 12 unless the test says otherwise.
    - ansible.builtin.set_fact:
        ansible_distribution: "{{ unit_distribution | default('Debian') }}"
        ansible_distribution_major_version: "{{ unit_major_version | default('12') }}"
        cacheable: true
    - ansible.builtin.set_fact:
        __gpu_monitoring_server_grafana_ca: {content: "{{ 'CA PEM' | b64encode }}"}
    - ansible.builtin.template: {src: "%(role)s/templates/prometheus.yml.j2", dest: "%(dir)s/prometheus.yml", mode: "0600"}
    - ansible.builtin.template: {src: "%(role)s/templates/grafana-datasource.yml.j2", dest: "%(dir)s/datasource.yml", mode: "0600"}
    - ansible.builtin.copy:
        dest: "%(out)s"
        mode: "0600"
        content: "{{ {'ports': _gpu_monitoring_node_firewall_ports, 'grafana': _gpu_monitoring_server_grafana_server_settings,
                      'node_args': _gpu_monitoring_node_exporter_args} | to_json }}"
'''


def render(ansible_play, **extra):
    extra.setdefault('gpu_monitoring_web_password', 'unit-test-password')
    proc, got = ansible_play(PLAYBOOK, extra, INVENTORY, role=ROLE, role_vars=['gpu_monitoring_node', 'gpu_monitoring_server', 'gpu_monitoring'])
    assert proc.returncode == 0, proc.stdout
    got['prometheus'] = yaml.safe_load((ansible_play.dir / 'prometheus.yml').read_text())
    got['datasource'] = yaml.safe_load((ansible_play.dir / 'datasource.yml').read_text())
    return got


def test_exporter_ports_open_to_the_monitoring_servers_only(ansible_play):
    got = render(ansible_play)
    sources = ['10.0.0.5', '10.0.0.6']
    assert got['ports'] == [{'port': 9100, 'proto': 'tcp', 'sources': sources}]
    got = render(ansible_play, gpu_monitoring_exporter='nvidia_gpu_exporter', gpu_monitoring_firewall_sources=['192.0.2.0/24'])
    assert got['ports'] == [{'port': 9100, 'proto': 'tcp', 'sources': sources + ['192.0.2.0/24']},
                            {'port': 9835, 'proto': 'tcp', 'sources': sources + ['192.0.2.0/24']}]


def test_no_port_without_a_source_nor_for_a_loopback_exporter(ansible_play):
    assert render(ansible_play, gpu_monitoring_server_group='nobody')['ports'] == []
    got = render(ansible_play, gpu_monitoring_exporter='dcgm', gpu_monitoring_node_exporter_listen_address='127.0.0.1')
    assert got['ports'] == [{'port': 9400, 'proto': 'tcp', 'sources': ['10.0.0.5', '10.0.0.6']}]


def test_prometheus_scrapes_and_alerts_over_https_with_basic_auth(ansible_play, tmp_path):
    config = render(ansible_play)['prometheus']
    client = {'scheme': 'https', 'tls_config': {'ca_file': '/etc/gpuops-pki/ca.crt'},
              'basic_auth': {'username': 'gpuops', 'password_file': '/etc/gpuops-monitoring/web-password'}}
    for job in config['scrape_configs']:
        assert {k: job[k] for k in client} == client, job
    manager = config['alerting']['alertmanagers'][0]
    assert {k: manager[k] for k in client} == client
    nodes = [t for c in config['scrape_configs'][1]['static_configs'] for t in c['targets']]
    assert nodes == ['node-1.example.com:9100', '10.0.0.12:9100']
    assert 'unit-test-password' not in (tmp_path / 'prometheus.yml').read_text()


def test_plain_http_only_when_both_are_off(ansible_play):
    got = render(ansible_play, gpu_monitoring_tls=False, gpu_monitoring_web_auth=False)
    for job in got['prometheus']['scrape_configs']:
        assert job['scheme'] == 'http' and 'tls_config' not in job and 'basic_auth' not in job
    assert '--web.config.file' not in got['node_args']
    assert '--web.config.file=/etc/gpuops-monitoring/web-node_exporter.yml' in render(ansible_play)['node_args']


def test_node_exporter_before_1_5_gets_its_old_flag_name(ansible_play):
    # Ubuntu 22.04 ships node_exporter 1.3.1, which exits on --web.config.file (seen in site@ubuntu2204).
    args = render(ansible_play, unit_distribution='Ubuntu', unit_major_version='22')['node_args']
    assert '--web.config=/etc/gpuops-monitoring/web-node_exporter.yml' in args and '--web.config.file' not in args
    args = render(ansible_play, unit_distribution='Ubuntu', unit_major_version='24')['node_args']
    assert '--web.config.file=/etc/gpuops-monitoring/web-node_exporter.yml' in args


def test_grafana_serves_https_and_reads_prometheus_over_https(ansible_play):
    got = render(ansible_play)
    assert {s['key']: s['value'] for s in got['grafana']} == {
        'http_addr': '0.0.0.0', 'http_port': '3000', 'protocol': 'https',
        'cert_file': '/etc/gpuops-pki/grafana.crt', 'cert_key': '/etc/gpuops-pki/grafana.key'}
    source = got['datasource']['datasources'][0]
    assert source['url'] == 'https://127.0.0.1:9090'
    assert source['basicAuth'] is True and source['basicAuthUser'] == 'gpuops'
    assert source['jsonData'] == {'tlsAuthWithCACert': True}
    assert source['secureJsonData'] == {'basicAuthPassword': 'unit-test-password', 'tlsCACert': 'CA PEM\n'}


def test_each_node_is_scraped_by_its_own_exporter_under_either_name(ansible_play):
    """A node's exporter choice and port come from its host variables: the gpu_monitoring_node role's names, else the
    gpu_monitoring entry's (1.0.0 inventories), else the server's defaults."""
    inventory = INVENTORY.replace(
        'node-1: {ansible_host: node-1.example.com}',
        'node-1: {ansible_host: node-1.example.com, gpu_monitoring_exporter: nvidia_gpu_exporter}').replace(
        'node-2: {ansible_host: 10.0.0.12}',
        'node-2: {ansible_host: 10.0.0.12, gpu_monitoring_node_gpu_exporter: dcgm, gpu_monitoring_node_dcgm_port: 9500,'
        ' gpu_monitoring_exporter: textfile}')
    # Only the server role's variables are loaded (include_vars would outrank the inventory, as role defaults do not).
    playbook = PLAYBOOK.split('    - ansible.builtin.template: {src: "%(role)s/templates/grafana', maxsplit=1)[0]
    proc, _unused = ansible_play(playbook, {'gpu_monitoring_server_web_password': 'unit-test-password'}, inventory,
                                 role=ROLE, role_vars=['gpu_monitoring_server'])
    assert proc.returncode == 0, proc.stdout
    config = yaml.safe_load((ansible_play.dir / 'prometheus.yml').read_text())
    jobs = {job['job_name']: job for job in config['scrape_configs']}
    exporters = [(c['targets'], c['labels']['gpu_exporter']) for c in jobs['gpu_exporter']['static_configs']]
    assert exporters == [(['node-1.example.com:9835'], 'nvidia_gpu_exporter'), (['10.0.0.12:9500'], 'dcgm')]
