# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/fleet_report.yml over three hosts: a healthy 8-GPU H200, an H100 that lost GPUs and logged Xids, and a
host that does not answer. Local connections with recorded nvidia-smi output; the Molecule-free way to run the whole
playbook, reports included."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOK = os.path.join(ROOT, 'playbooks', 'fleet_report.yml')
ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')

pytestmark = pytest.mark.skipif(not os.path.exists(ANSIBLE_PLAYBOOK), reason='ansible-playbook not in this venv')


def fake_smi(tmp_path, host, capture):
    calls = tmp_path / ('%s.calls' % host)
    smi = tmp_path / ('nvidia-smi-%s' % host)
    smi.write_text("#!/bin/sh\necho \"$*\" >> '%s'\ncat '%s'\n" % (calls, fixture_path('nvidia_smi', capture)))
    smi.chmod(0o755)
    return str(smi), calls


@pytest.fixture(scope='module')
def fleet(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp('fleet')
    h200, h200_calls = fake_smi(tmp_path, 'h200', 'hgx_h200_8gpu_r570.xml')
    h100, h100_calls = fake_smi(tmp_path, 'h100', 'h100_lost_gpus_r535.xml')
    local = {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}
    inventory = {'all': {'children': {'gpu_servers': {'hosts': {
        'gpu-h200-01': dict(local, gpuops_fleet_nvidia_smi_path=h200,
                            gpuops_fleet_kernel_log_path=fixture_path('kernel_log', 'no_xid.txt')),
        'gpu-h100-07': dict(local, gpuops_fleet_nvidia_smi_path=h100,
                            gpuops_fleet_kernel_log_path=fixture_path('kernel_log', 'journal_short_iso.txt')),
        'gpu-down-03': {'ansible_host': '127.0.0.1', 'ansible_port': 1, 'ansible_connection': 'ssh',
                        'ansible_ssh_common_args': '-o ConnectTimeout=3 -o StrictHostKeyChecking=no'},
    }}}, 'hosts': {'localhost': local}}}
    (tmp_path / 'inventory.yml').write_text(yaml.safe_dump(inventory))
    environ = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.cache', 'collections'),
                   ANSIBLE_FORCE_COLOR='0', ANSIBLE_NOCOLOR='1', ANSIBLE_HOST_KEY_CHECKING='false')
    out_dir = tmp_path / 'report'
    proc = subprocess.run([ANSIBLE_PLAYBOOK, PLAYBOOK, '-i', str(tmp_path / 'inventory.yml'),
                           '-e', 'gpuops_fleet_report_dir=%s' % out_dir], env=environ, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=180, universal_newlines=True, check=False)
    return {'rc': proc.returncode, 'out': proc.stdout, 'dir': out_dir,
            'calls': {'h200': h200_calls.read_text().splitlines(), 'h100': h100_calls.read_text().splitlines()}}


def test_the_run_succeeds_and_reads_nvidia_smi_once_per_host(fleet):
    assert fleet['rc'] == 0, fleet['out']
    assert fleet['calls'] == {'h200': ['-q -x'], 'h100': ['-q -x']}


def test_the_json_has_one_record_per_gpu_and_lists_the_host_that_did_not_answer(fleet):
    report = json.loads((fleet['dir'] / 'fleet-report.json').read_text())
    gpus = [r for r in report['records'] if r['gpu'] is not None]
    assert len([r for r in gpus if r['host'] == 'gpu-h200-01']) == 8
    # The recording has GPU 3 at 84 C (slowdown at 87 C) and GPU 5 on x8 of x16: warn, as gpu_health judges them.
    assert sorted(r['gpu'] for r in gpus if r['host'] == 'gpu-h200-01' and r['status'] == 'warn') == [3, 5]
    assert [u['host'] for u in report['hosts']['unreachable']] == ['gpu-down-03']
    assert report['records'][0]['host'] == 'gpu-h100-07' and report['records'][0]['status'] == 'fail'
    assert any(r['xid'] for r in report['records'] if r['host'] == 'gpu-h100-07')


def test_markdown_html_and_the_console_summary(fleet):
    markdown = (fleet['dir'] / 'fleet-report.md').read_text()
    html = (fleet['dir'] / 'fleet-report.html').read_text()
    assert 'gpu-down-03' in markdown and 'gpu-h100-07' in markdown
    assert html.lstrip().lower().startswith('<!doctype html') and 'id="gpus"' in html and 'gpu-down-03' in html
    assert 'gpu-down-03' in fleet['out'] and 'Reports: %s' % fleet['dir'] in fleet['out']
