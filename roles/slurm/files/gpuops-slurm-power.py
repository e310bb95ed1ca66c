# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Slurm's ResumeProgram and SuspendProgram for CLOUD nodes: start or end each node's instance.

Run by slurmctld as ``gpuops-slurm-power resume HOSTLIST`` or ``gpuops-slurm-power suspend HOSTLIST`` (the wrappers
the gpuops.gpu_server.slurm role installs). The hostlist is expanded by Slurm itself (``scontrol show hostnames``).
Resume starts each node's instance through the backend of the settings file and gives Slurm its address (``scontrol
update NodeName=... NodeAddr=... NodeHostname=...``); a node whose instance cannot be started is powered down again
with the reason (``State=POWER_DOWN_FORCE``), so that its jobs go back to the queue instead of waiting for
ResumeTimeout. Suspend ends the cluster's instances of the nodes. The backends and their rules are the collection's
(plugins/module_utils/_slurm_power.py, copied next to this script).

Settings: a JSON file (``--config``, written by the role): cluster, backend (ec2 or docker), scontrol, log,
user_data_file (the first-boot script each new node gets), and the backend's own: ec2 {region, launch_template,
subnet_id, tags}, docker {image, network, run_args, command, docker}.
Each run appends one line per node to the log. Exit status 1 when a node failed.
Deployed by gpuops.gpu_server.slurm; do not edit on the host.
"""

from __future__ import (absolute_import, division, print_function)

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _slurm_power  # noqa: E402 pylint: disable=wrong-import-position


def backend_of(config, runner):
    """The backend the settings name, with the first-boot user-data of the settings' user_data_file."""
    kind = config.get('backend')
    user_data = ''
    if config.get('user_data_file'):
        with open(config['user_data_file']) as f:
            user_data = f.read()
    if kind == 'ec2':
        import boto3  # pylint: disable=import-outside-toplevel,import-error  # only where the EC2 backend is used
        ec2 = config.get('ec2') or {}
        # boto3 base64-encodes UserData itself.
        client = boto3.client('ec2', region_name=ec2.get('region') or None)
        return _slurm_power.Ec2Backend(client, config['cluster'], ec2.get('launch_template', ''), user_data,
                                       ec2.get('subnet_id', ''), ec2.get('tags'))
    if kind == 'docker':
        docker = config.get('docker') or {}
        return _slurm_power.DockerBackend(config['cluster'], docker.get('image', ''), docker.get('network', ''),
                                          docker.get('run_args', ()), docker.get('docker', 'docker'), runner,
                                          user_data=user_data, command=docker.get('command', ()))
    raise _slurm_power.PowerError('unknown backend %r: ec2 or docker' % (kind,))


def main(argv=None, runner=_command.run):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('action', choices=['resume', 'suspend'])
    parser.add_argument('hostlist')
    parser.add_argument('--config', default='/etc/gpuops/slurm-power.json')
    args = parser.parse_args(argv)
    with open(args.config) as f:
        config = json.load(f)
    scontrol = config.get('scontrol', 'scontrol')
    lines = []

    def log(message):
        lines.append('%s %s %s' % (time.strftime('%Y-%m-%dT%H:%M:%S'), args.action, message))

    def scontrol_update(*fields):
        rc, out, err = runner([scontrol, 'update'] + list(fields), timeout=60)
        if rc != 0:
            raise _slurm_power.PowerError('scontrol update %s failed: %s' % (' '.join(fields), (err or out).strip()))

    failed = False
    try:
        rc, out, err = runner([scontrol, 'show', 'hostnames', args.hostlist], timeout=60)
        if rc != 0:
            raise _slurm_power.PowerError('scontrol show hostnames %s failed: %s' % (args.hostlist, (err or out).strip()))
        nodes = out.split()
        backend = backend_of(config, runner)
        if args.action == 'resume':
            results = _slurm_power.resume(
                nodes, backend, lambda node, address: scontrol_update('NodeName=%s' % node, 'NodeAddr=%s' % address,
                                                                      'NodeHostname=%s' % node))
            for node, address, error in results:
                if error:
                    failed = True
                    log('%s FAILED: %s' % (node, error))
                    try:
                        scontrol_update('NodeName=%s' % node, 'State=POWER_DOWN_FORCE',
                                        'Reason=gpuops resume failed: %s' % error[:150])
                    except _slurm_power.PowerError as e:
                        log('%s: %s' % (node, e))
                else:
                    log('%s up at %s' % (node, address))
        else:
            ended = backend.stop(nodes)
            log('%s ended (%s)' % (','.join(nodes), ', '.join(ended) or 'no instance'))
    except (_slurm_power.PowerError, _command.CommandError, OSError, ValueError) as e:
        failed = True
        log('%s FAILED: %s' % (args.hostlist, e))
    text = '\n'.join(lines) + '\n'
    if config.get('log'):
        with open(config['log'], 'a') as f:
            f.write(text)
    # slurmctld runs the program with its standard streams closed (sys.stdout is None then): the log is the record.
    if sys.stdout is not None:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
