# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/support/scap_count.py: the share of applicable rules that pass, from an XCCDF results file shaped as
`oscap xccdf eval --results` writes it (molecule/site's OpenSCAP test and make test-server read it)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import subprocess
import sys

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT
from ansible_collections.gpuops.gpu_server.tests.support.scap_count import count

RESULTS = """<?xml version="1.0" encoding="UTF-8"?>
<Benchmark xmlns="http://checklists.nist.gov/xccdf/1.2" id="xccdf_org.ssgproject.content_benchmark_UBUNTU2404">
  <TestResult id="xccdf_org.open-scap_testresult_cis">
    %s
  </TestResult>
</Benchmark>
"""
RULE = '<rule-result idref="xccdf_org.ssgproject.content_rule_%s"><result>%s</result></rule-result>'


def results_file(tmp_path, rules):
    path = tmp_path / 'results.xml'
    path.write_text(RESULTS % '\n    '.join(RULE % rule for rule in rules))
    return str(path)


def test_count_reads_the_share_of_applicable_rules_that_pass(tmp_path):
    path = results_file(tmp_path, [('sshd_disable_root_login', 'pass'), ('partition_for_tmp', 'fail'),
                                   ('grub2_password', 'notapplicable'), ('aide_build_database', 'pass'),
                                   ('audit_rules_time_adjtimex', 'error'), ('package_telnet_removed', 'notselected'),
                                   ('sysctl_kernel_randomize_va_space', 'pass')])
    summary = count(path)
    assert summary['results'] == {'pass': 3, 'fail': 1, 'notapplicable': 1, 'error': 1, 'notselected': 1}
    assert summary['applicable'] == 5
    assert summary['percent'] == 60.0
    assert summary['failed'] == ['audit_rules_time_adjtimex', 'partition_for_tmp']


def test_no_applicable_rule_is_zero_percent(tmp_path):
    assert count(results_file(tmp_path, [('grub2_password', 'notapplicable')]))['percent'] == 0.0


def test_the_script_prints_the_summary(tmp_path):
    path = results_file(tmp_path, [('sshd_disable_root_login', 'pass')])
    out = subprocess.run([sys.executable, '%s/tests/support/scap_count.py' % ROOT, path], check=True,
                         stdout=subprocess.PIPE, universal_newlines=True).stdout
    assert json.loads(out)['percent'] == 100.0
