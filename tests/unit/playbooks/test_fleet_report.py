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
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from ansible_collections.gpuops.gpu_server.tests.support import markdown as markdown_check
from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT, needs_ansible_playbook, run_playbook
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import fixture_path

PLAYBOOK = os.path.join(ROOT, 'playbooks', 'fleet_report.yml')
# Debian's chromium (scripts/setup-host.sh installs it); the screenshot is kept as a build artifact.
CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser')
ARTIFACTS = os.path.join(ROOT, 'build', 'artifacts')

pytestmark = needs_ansible_playbook


def fake_smi(tmp_path, host, capture):
    calls = tmp_path / ('%s.calls' % host)
    smi = tmp_path / ('nvidia-smi-%s' % host)
    path = capture if os.path.isabs(capture) else fixture_path('nvidia_smi', capture)
    smi.write_text("#!/bin/sh\necho \"$*\" >> '%s'\ncat '%s'\n" % (calls, path))
    smi.chmod(0o755)
    return str(smi), calls


# Issue 29: a GPU whose name carries Markdown link and image syntax, a right-to-left override, an isolate and a C1
# CSI (U+009B) that would recolour a terminal.
HOSTILE_NAME = '[click](http://evil) ![x](http://evil/track.png) \u202eevil\u2066 \u009b31mred'


def hostile_capture(tmp_path):
    with open(fixture_path('nvidia_smi', 'h200_sxm_r580_idle.xml'), encoding='utf-8') as f:
        xml = f.read()
    assert xml.count('<product_name>NVIDIA H200</product_name>') == 1
    path = tmp_path / 'hostile.xml'
    path.write_text(xml.replace('<product_name>NVIDIA H200</product_name>',
                                '<product_name>%s</product_name>' % HOSTILE_NAME), encoding='utf-8')
    return str(path)


@pytest.fixture(scope='module')
def fleet(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp('fleet')
    h200, h200_calls = fake_smi(tmp_path, 'h200', 'hgx_h200_8gpu_r570.xml')
    h100, h100_calls = fake_smi(tmp_path, 'h100', 'h100_lost_gpus_r535.xml')
    odd, odd_calls = fake_smi(tmp_path, 'odd', hostile_capture(tmp_path))
    local = {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}
    inventory = {'all': {'children': {'gpu_servers': {'hosts': {
        'gpu-h200-01': dict(local, gpuops_fleet_nvidia_smi_path=h200,
                            gpuops_fleet_kernel_log_path=fixture_path('kernel_log', 'no_xid.txt')),
        'gpu-h100-07': dict(local, gpuops_fleet_nvidia_smi_path=h100,
                            gpuops_fleet_kernel_log_path=fixture_path('kernel_log', 'journal_short_iso.txt')),
        'gpu-odd-04': dict(local, gpuops_fleet_nvidia_smi_path=odd,
                           gpuops_fleet_kernel_log_path=fixture_path('kernel_log', 'no_xid.txt')),
        'gpu-down-03': {'ansible_host': '127.0.0.1', 'ansible_port': 1, 'ansible_connection': 'ssh',
                        'ansible_ssh_common_args': '-o ConnectTimeout=3 -o StrictHostKeyChecking=no'},
    }}}, 'hosts': {'localhost': local}}}
    (tmp_path / 'inventory.yml').write_text(yaml.safe_dump(inventory))
    out_dir = tmp_path / 'report'
    proc = run_playbook(PLAYBOOK, '-e', 'gpuops_fleet_report_dir=%s' % out_dir, inventory=tmp_path / 'inventory.yml',
                        local=False, env={'ANSIBLE_HOST_KEY_CHECKING': 'false'}, timeout=180)
    return {'rc': proc.returncode, 'out': proc.stdout, 'dir': out_dir,
            'calls': {'h200': h200_calls.read_text().splitlines(), 'h100': h100_calls.read_text().splitlines(),
                      'odd': odd_calls.read_text().splitlines()}}


def test_the_run_succeeds_and_reads_nvidia_smi_once_per_host(fleet):
    assert fleet['rc'] == 0, fleet['out']
    assert fleet['calls'] == {'h200': ['-q -x'], 'h100': ['-q -x'], 'odd': ['-q -x']}


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


def test_text_from_a_host_is_inert_in_every_report(fleet):
    """Issue 29: the link and image syntax of a GPU name is text in the Markdown; its bidi and C1 characters are
    shown escaped in the JSON records, the Markdown, the page and the console."""
    shown = '[click](http://evil) ![x](http://evil/track.png) \\u202eevil\\u2066 \\u009b31mred'
    report = json.loads((fleet['dir'] / 'fleet-report.json').read_text())
    assert [r['model'] for r in report['records'] if r['host'] == 'gpu-odd-04'] == [shown]
    markdown = (fleet['dir'] / 'fleet-report.md').read_text()
    # Words a renderer would autolink (here URLs) are code spans (issue 52), the rest escaped text.
    assert '| `[click](http://evil)` `![x](http://evil/track.png)` \\\\u202eevil' in markdown
    plain = markdown_check.plain(markdown)
    assert '](' not in plain and '![' not in plain
    assert '<a ' not in markdown_check.gfm(markdown) and '<img' not in markdown_check.gfm(markdown)
    page = (fleet['dir'] / 'fleet-report.html').read_text()
    assert '[click](http://evil) ![x](http://evil/track.png) \\u202eevil\\u2066 \\u009b31mred' in page
    for text in (markdown, page, fleet['out'], json.dumps(report, ensure_ascii=False)):
        assert not set(text) & {'\u202e', '\u2066', '\x9b', '\x1b'}
    assert '[click](http://evil) ![x](http://evil/track.png) \\\\u202eevil' in fleet['out']   # JSON-quoted by the callback


def chromium(tmp_path, *args):
    argv = [CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--no-first-run',
            '--user-data-dir=%s' % (tmp_path / 'chromium-profile')] + list(args)
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, universal_newlines=True,
                          check=False)


def test_the_html_opens_in_headless_chromium_with_the_sick_gpu_in_the_first_row(fleet, tmp_path):
    assert CHROMIUM, 'chromium is not installed: scripts/setup-host.sh installs Debian\'s chromium'
    page = 'file://%s' % (fleet['dir'] / 'fleet-report.html')
    # The DOM after the page's script ran: the GPU table's first body row is the failing H100.
    proc = chromium(tmp_path, '--enable-logging=stderr', '--v=1', '--dump-dom', page)
    assert proc.returncode == 0, proc.stderr
    # The script ran under the page's Content-Security-Policy (it made the headers focusable) and neither it nor
    # the style was refused (issue 29: allowed by their hashes, not 'unsafe-inline').
    assert re.search(r'<th scope="col"[^>]* tabindex="0"', proc.stdout), proc.stdout[:2000]
    assert 'Content Security Policy' not in proc.stderr, proc.stderr
    body = re.search(r'<table id="gpus">.*?<tbody>(.*?)</tbody>', proc.stdout, re.S)
    assert body, proc.stdout[:2000]
    first = re.search(r'<tr[^>]*>(.*?)</tr>', body.group(1), re.S)
    assert first and 'data-status="fail"' in body.group(0)[:body.group(0).index(first.group(1))], body.group(1)[:1000]
    assert 'gpu-h100-07' in first.group(1), first.group(1)
    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = os.path.join(ARTIFACTS, 'fleet-report.png')
    if os.path.exists(shot):
        os.remove(shot)
    proc = chromium(tmp_path, '--screenshot=%s' % shot, '--window-size=1920,1200', page)
    assert proc.returncode == 0, proc.stderr
    with open(shot, 'rb') as f:
        png = f.read()
    assert png[:8] == b'\x89PNG\r\n\x1a\n' and len(png) > 20000, len(png)
