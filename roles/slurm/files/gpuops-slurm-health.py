# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Slurm's HealthCheckProgram on a GPU node: gpu_health's checks, a drain on failure, a resume once they pass again.

Reads the node's GPUs (``nvidia-smi -q -x``) and its kernel log's Xid lines with the collection's own code
(plugins/module_utils/_facts.py, _kernel_log.py, _health.py, copied next to this script in their package layout by the
gpuops.gpu_server.slurm role, so there is one implementation) and judges them as the gpu_health module does. Where they
fail, it drains the node (``scontrol update NodeName=... State=DRAIN Reason="gpuops gpu_health: ..."``): Slurm then
starts no new job there and the reason shows in ``sinfo -R``. Where they pass and the node is drained with this
program's reason, it resumes the node; a node drained by someone else stays drained. A node without GPUs (an expected
count of 0) has nothing to check.

First boot of a CLOUD node (``--first-boot NODE``, run by the node's user-data before slurmd starts): the GPUs the
controller expects of NODE (``scontrol show node``'s Gres=) are checked the same way. A node that fails is drained with
the reason and powered down (``State=POWER_DOWN_FORCE``: Slurm's SuspendProgram releases it, its job goes back to the
queue) and slurmd is never started, so it gets no job. A node that passes has its settings written (node_name,
expected_gpu_count) for the periodic check.

Settings: a JSON file (``--config``, written by the role): node_name, expected_gpu_count, nvidia_smi, scontrol,
check_kernel_log, kernel_log_path (a file to read instead of the kernel log, for tests), thresholds, timeout.
Prints one line and exits 0 when the node is healthy, 1 when it is not (Slurm logs the exit code only).
Deployed by gpuops.gpu_server.slurm; do not edit on the host.
"""

from __future__ import (absolute_import, division, print_function)

import argparse
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _facts  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _health  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _kernel_log  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _slurm  # noqa: E402 pylint: disable=wrong-import-position


def judge(config, runner=_command.run):
    """gpu_health's evaluate for this node: {'status', 'checks', 'failing'}."""
    expected = config.get('expected_gpu_count')
    timeout = config.get('timeout', 60)
    if expected == 0:
        return {'status': _health.OK, 'checks': [], 'failing': []}
    nvidia_smi = config.get('nvidia_smi') or shutil.which('nvidia-smi')
    try:
        facts = _facts.gather(nvidia_smi, timeout=timeout, runner=runner)
    except _command.CommandTimeout as e:
        check = {'name': 'nvidia_smi', 'gpu': None, 'status': _health.FAIL, 'value': None,
                 'message': 'nvidia-smi hung: %s' % e}
        return {'status': _health.FAIL, 'checks': [check], 'failing': [check]}
    events, log_error = [], None
    if config.get('check_kernel_log', True):
        try:
            if config.get('kernel_log_path'):
                text = _kernel_log.read_file(config['kernel_log_path'])
            else:
                text, _source, log_error = _kernel_log.read(shutil.which('journalctl'), shutil.which('dmesg'),
                                                            timeout=timeout, runner=runner)
        except (_kernel_log.KernelLogError, _command.CommandError) as e:
            text, log_error = None, str(e)
        events = _kernel_log.parse(text) if text is not None else []
    return _health.evaluate(facts, events, expected_gpu_count=expected, thresholds=config.get('thresholds'),
                            kernel_log_error=log_error)


def _call(runner, argv, timeout):
    """RUNNER's (rc, stdout, stderr) of ARGV; a command that cannot start or hangs answers rc 1 and why."""
    try:
        return runner(argv, timeout=timeout)
    except _command.CommandError as e:
        return 1, '', str(e)


def first_boot(args, config, runner):
    """Check a CLOUD node before it joins: 0 and its settings written where it passes, 1 (drained and powered down)
    where it fails or the controller cannot be asked."""
    node, scontrol = args.first_boot, config.get('scontrol', 'scontrol')
    timeout = config.get('timeout', 60)
    rc, out, err = _call(runner, [scontrol, 'show', 'node', node, '-o'], timeout)
    if rc != 0:
        print('gpuops-slurm-health: %s: first boot: scontrol show node failed: %s' % (node, (err or out).strip()))
        return 1
    config = dict(config, node_name=node, expected_gpu_count=_slurm.gres_gpu_count(out))
    result = judge(config, runner)
    if result['status'] == _health.FAIL:
        why = _slurm.failure_reason(result, _slurm.FIRST_BOOT_PREFIX)
        outcome = []
        # DOWN with the reason (its job goes back to the queue), then powered down (SuspendProgram ends the instance):
        # the node stays DOWN+POWERED_DOWN, the state Slurm gives a node that fails to resume, and is not started again
        # until an administrator resumes it. (POWER_DOWN_FORCE would reset it to IDLE, drained or not, and Slurm would
        # start it again for the same job: seen with Slurm 22.05.)
        for fields in (['State=DOWN', 'Reason=%s' % why], ['State=POWER_DOWN', 'Reason=%s' % why]):
            rc, out, err = _call(runner, [scontrol, 'update', 'NodeName=%s' % node] + fields, timeout)
            outcome.append('%s %s' % (fields[0], 'done' if rc == 0 else 'FAILED: %s' % (err or out).strip()))
        print('gpuops-slurm-health: %s: %s; not joining (%s)' % (node, why, ', '.join(outcome)))
        return 1
    with open(args.config + '.new', 'w') as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write('\n')
    os.rename(args.config + '.new', args.config)
    print('gpuops-slurm-health: %s: first boot: %s, %d GPU(s) as expected'
          % (node, result['status'], config['expected_gpu_count']))
    return 0


def main(argv=None, runner=_command.run):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--config', default='/etc/gpuops/slurm-health.json')
    parser.add_argument('--dry-run', action='store_true', help='judge and print; drain and resume nothing')
    parser.add_argument('--first-boot', metavar='NODE', help='check CLOUD node NODE before slurmd starts')
    args = parser.parse_args(argv)
    with open(args.config) as f:
        config = json.load(f)
    if args.first_boot:
        return first_boot(args, config, runner)
    node, scontrol = config['node_name'], config.get('scontrol', 'scontrol')
    timeout = config.get('timeout', 60)
    result = judge(config, runner)
    if args.dry_run:
        bad = ['%s: %s' % (c['status'], c['message']) for c in result['failing']]
        print('gpuops-slurm-health: %s: %s%s' % (node, result['status'], (' (' + '; '.join(bad) + ')') if bad else ''))
        return 1 if result['status'] == _health.FAIL else 0
    rc, out, err = _call(runner, [scontrol, 'show', 'node', node, '-o'], timeout)
    if rc != 0:
        print('gpuops-slurm-health: %s: scontrol show node failed: %s' % (node, (err or out).strip()))
        return 1 if result['status'] == _health.FAIL else 0
    action, why = _slurm.health_action(result, _slurm.parse_node_state(out))
    if action == 'drain':
        argv = [scontrol, 'update', 'NodeName=%s' % node, 'State=DRAIN', 'Reason=%s' % why]
    elif action == 'resume':
        argv = [scontrol, 'update', 'NodeName=%s' % node, 'State=RESUME']
    else:
        print('gpuops-slurm-health: %s: %s (%s)' % (node, result['status'], why))
        return 1 if result['status'] == _health.FAIL else 0
    rc, out, err = _call(runner, argv, timeout)
    outcome = '' if rc == 0 else ' FAILED: %s' % (err or out).strip()
    print('gpuops-slurm-health: %s: %s%s%s' % (node, action, (': ' + why) if why else '', outcome))
    return 1 if result['status'] == _health.FAIL or rc != 0 else 0


if __name__ == '__main__':
    sys.exit(main())
