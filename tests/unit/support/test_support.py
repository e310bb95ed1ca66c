# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/support: the poller returns the first truthy answer, or fails naming what it waited for; the playbook runner
runs this checkout's collection on this machine and reports a failing playbook as one; the Molecule verifiers' runner
runs the ansible-playbook first on PATH against the scenario's inventory and ansible.cfg."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import sys
import time

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT, molecule_playbook, run_playbook
from ansible_collections.gpuops.gpu_server.tests.support.playbook import needs_ansible_playbook
from ansible_collections.gpuops.gpu_server.tests.support.waiting import wait_for


def answers(*values):
    """A predicate that gives VALUES one call at a time (an exception instance is raised), counting its calls."""
    calls = []

    def predicate():
        value = values[len(calls)]
        calls.append(value)
        if isinstance(value, Exception):
            raise value
        return value
    return predicate, calls


def test_returns_the_first_truthy_answer_without_waiting_longer():
    predicate, calls = answers(None, [], ['up'], ['later'])
    assert wait_for(predicate, 5, 'the target', step=0.01) == ['up']
    assert len(calls) == 3


def test_times_out_naming_what_it_waited_for():
    predicate, calls = answers(*[False] * 1000)
    start = time.monotonic()
    with pytest.raises(AssertionError, match=r'^timed out after 0\.2 s waiting for the final sync$'):
        wait_for(predicate, 0.2, 'the final sync', step=0.05)
    assert 0.2 <= time.monotonic() - start < 2
    assert len(calls) >= 2


def test_the_description_may_be_computed_at_the_timeout():
    state = {'url': 'about:blank'}
    predicate, _calls = answers(*[None] * 1000)
    state['url'] = 'https://lab/login'
    with pytest.raises(AssertionError, match='waiting for the lab to load .at https://lab/login.'):
        wait_for(predicate, 0.1, lambda: 'the lab to load (at %s)' % state['url'], step=0.05)


def test_an_ignored_exception_is_not_yet_and_is_named_at_the_timeout():
    predicate, _calls = answers(KeyError('stale'), 'found')
    assert wait_for(predicate, 5, 'the element', step=0.01, ignore=(KeyError,)) == 'found'
    predicate, _calls = answers(*[KeyError('stale')] * 1000)
    with pytest.raises(AssertionError, match=r"waiting for the element \(the last poll raised KeyError: 'stale'\)"):
        wait_for(predicate, 0.1, 'the element', step=0.05, ignore=(KeyError,))


def test_any_other_exception_is_raised_at_once():
    predicate, calls = answers(ValueError('broken'), 'found')
    with pytest.raises(ValueError, match='broken'):
        wait_for(predicate, 5, 'the element', step=0.01, ignore=(KeyError,))
    assert len(calls) == 1


@needs_ansible_playbook
def test_the_runner_uses_this_checkout_on_this_machine_and_reports_failure(tmp_path):
    playbook = tmp_path / 'play.yml'
    playbook.write_text('- hosts: localhost\n  gather_facts: false\n  tasks:\n'
                        '    - ansible.builtin.copy:\n        content: "{{ \'tests/support\' | gpuops.gpu_server.collection_path }}"\n'
                        '        dest: "{{ out }}"\n        mode: "0644"\n'
                        '    - ansible.builtin.fail:\n        msg: refused by {{ ansible_connection }} {{ answer }}\n')
    out = tmp_path / 'collection'
    proc = run_playbook(playbook, '-e', 'answer=42', '-e', 'out=%s' % out)
    assert proc.returncode == 2, proc.stdout
    assert '"msg": "refused by local 42"' in proc.stdout, proc.stdout
    # The collection is this checkout (.cache/collections links it), not a copy installed elsewhere.
    assert os.path.realpath(out.read_text()) == os.path.join(ROOT, 'tests', 'support')


FAKE_COMMAND = """#!%s
import json, os, sys
print(json.dumps({'argv': sys.argv[1:], 'config': os.environ.get('ANSIBLE_CONFIG'), 'color': os.environ.get('ANSIBLE_NOCOLOR'),
                  'collections': os.environ.get('ANSIBLE_COLLECTIONS_PATH'), 'extra': os.environ.get('GPUOPS_EXTRA')}))
sys.stdout.flush()
sys.stderr.write('fatal: on stderr\\n')
sys.exit(3)
"""


@pytest.mark.parametrize('command', ['ansible-playbook', 'ansible'])
def test_the_verifier_runner_runs_the_command_on_path_against_the_scenario(tmp_path, monkeypatch, command):
    # A stand-in for the command Molecule runs (scripts/molecule-all.sh puts Mitogen's wrapper first on PATH): it
    # prints what it was given and fails, writing to stderr as ansible-core 2.19 does.
    (tmp_path / 'bin').mkdir()
    fake = tmp_path / 'bin' / command
    fake.write_text(FAKE_COMMAND % sys.executable)
    fake.chmod(0o755)
    monkeypatch.setenv('PATH', '%s%s%s' % (tmp_path / 'bin', os.pathsep, os.environ['PATH']))
    monkeypatch.setenv('MOLECULE_EPHEMERAL_DIRECTORY', str(tmp_path / 'ephemeral'))
    monkeypatch.setenv('MOLECULE_INVENTORY_FILE', str(tmp_path / 'ephemeral' / 'inventory'))
    rc, out = molecule_playbook('converge.yml', '--check', 7, extra_vars={'a': [1]}, env={'GPUOPS_EXTRA': 'yes'}, command=command)
    assert rc == 3, out
    given = json.loads(out.splitlines()[0])
    assert given['argv'] == ['converge.yml', '-i', str(tmp_path / 'ephemeral' / 'inventory'), '--check', '7', '-e', '{"a": [1]}']
    assert given['config'] == str(tmp_path / 'ephemeral' / 'ansible.cfg')
    assert given['collections'] == os.path.join(ROOT, '.cache', 'collections')
    assert (given['color'], given['extra']) == ('1', 'yes')
    assert out.splitlines()[1:] == ['fatal: on stderr']
    # No extra variables: no -e.
    rc, out = molecule_playbook('converge.yml', command=command)
    assert json.loads(out.splitlines()[0])['argv'] == ['converge.yml', '-i', str(tmp_path / 'ephemeral' / 'inventory')]
