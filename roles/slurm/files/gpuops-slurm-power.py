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
ResumeTimeout. Suspend ends the cluster's instances of the nodes; a node whose instance could not be ended is set
``State=DOWN`` with the reason, so that ``sinfo -R`` shows the instance that may still run (and cost). The backends
and their rules are the collection's (plugins/module_utils/_slurm_power.py, copied next to this script).

Errors are per node: any error of a node (botocore's ClientError, NoCredentialsError, EndpointConnectionError, a bad
answer of docker, or one nobody foresaw) is that node's, and the next node is tried; an error of the backend as a whole
(no boto3, no region, unreadable settings) is every node's. Nothing escapes as a traceback: slurmctld runs the program
with its standard streams closed, so the log is the record.

Settings: a JSON file (``--config``, written by the role): cluster, backend (ec2 or docker), scontrol, log,
user_data_file (the first-boot script each new node gets), and the backend's own: ec2 {region, launch_template (a
name), launch_template_id (an id, lt-...; one of the two), subnet_id, tags, endpoint_url (empty = AWS's)}, docker
{image, network, run_args, command, docker}.
Each node's outcome is appended to the log as one line when it is done (flushed at once, not at the end of the run).
Exit status 1 when a node failed.
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
        ec2 = config.get('ec2') or {}
        # The launch template first: a wrong one is refused before boto3 is needed.
        _slurm_power.launch_template_spec(ec2.get('launch_template', ''), ec2.get('launch_template_id', ''))
        import boto3  # pylint: disable=import-outside-toplevel,import-error  # only where the EC2 backend is used
        from botocore.config import Config  # pylint: disable=import-outside-toplevel,import-error
        # Each call bounded, so that a dead endpoint fails a node within ResumeTimeout instead of hanging the run:
        # boto3's standard retry mode (3 attempts, with backoff), 10 s to connect, 60 s to read.
        # boto3 base64-encodes UserData itself.
        client = boto3.client('ec2', region_name=ec2.get('region') or None, endpoint_url=ec2.get('endpoint_url') or None,
                              config=Config(connect_timeout=10, read_timeout=60,
                                            retries={'max_attempts': 3, 'mode': 'standard'}))
        return _slurm_power.Ec2Backend(client, config['cluster'], ec2.get('launch_template', ''), user_data,
                                       ec2.get('subnet_id', ''), ec2.get('tags'),
                                       launch_template_id=ec2.get('launch_template_id', ''))
    if kind == 'docker':
        docker = config.get('docker') or {}
        return _slurm_power.DockerBackend(config['cluster'], docker.get('image', ''), docker.get('network', ''),
                                          docker.get('run_args', ()), docker.get('docker', 'docker'), runner,
                                          user_data=user_data, command=docker.get('command', ()))
    raise _slurm_power.PowerError('unknown backend %r: ec2 or docker' % (kind,))


class Log(object):
    """The run's record: each line appended to the log file (where the settings name one) and flushed at once, and
    printed where the program has a standard output (slurmctld closes it: sys.stdout is None then)."""

    def __init__(self, action):
        self.action = action
        self.file = None
        self.lines = []

    def open(self, path):
        if not path:
            return
        try:
            self.file = open(path, 'a')
        except OSError as e:
            self('cannot write the log %s: %s' % (path, e))

    def __call__(self, message):
        line = '%s %s %s\n' % (time.strftime('%Y-%m-%dT%H:%M:%S'), self.action, _slurm_power.one_line(message))
        self.lines.append(line)
        for stream in (self.file, sys.stdout):
            if stream is None:
                continue
            try:
                stream.write(line)
                stream.flush()
            except (OSError, ValueError):
                pass

    def close(self):
        if self.file is not None:
            try:
                self.file.close()
            except OSError:
                pass


def main(argv=None, runner=_command.run):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('action', choices=['resume', 'suspend'])
    parser.add_argument('hostlist')
    parser.add_argument('--config', default='/etc/gpuops/slurm-power.json')
    args = parser.parse_args(argv)
    log = Log(args.action)
    try:
        return _run(args, runner, log)
    finally:
        log.close()


def _run(args, runner, log):
    config, config_error = {}, ''
    try:
        with open(args.config) as f:
            config = json.load(f)
        if not isinstance(config, dict):
            raise ValueError('expected a JSON object, got %s' % type(config).__name__)
    except (OSError, ValueError) as e:
        config, config_error = {}, 'the settings %s cannot be read: %s' % (args.config, e)
    log.open(config.get('log'))
    scontrol = config.get('scontrol') or 'scontrol'

    def scontrol_update(*fields):
        rc, out, err = runner([scontrol, 'update'] + list(fields), timeout=60)
        if rc != 0:
            raise _slurm_power.PowerError('scontrol update %s failed: %s' % (' '.join(fields), (err or out).strip()))

    try:
        rc, out, err = runner([scontrol, 'show', 'hostnames', args.hostlist], timeout=60)
        if rc != 0:
            raise _slurm_power.PowerError('scontrol show hostnames %s failed: %s' % (args.hostlist, (err or out).strip()))
    except Exception as e:  # pylint: disable=broad-except  # no node is known: the hostlist fails as a whole
        log('%s FAILED: %s%s' % (args.hostlist, config_error + '; ' if config_error else '', _slurm_power.describe_error(e)))
        return 1
    nodes = out.split()

    backend, backend_error = None, config_error
    if not backend_error:
        try:
            backend = backend_of(config, runner)
        except Exception as e:  # pylint: disable=broad-except  # every node's error, said per node below
            backend_error = _slurm_power.describe_error(e)
    failed = []

    def tell_slurm(node, state, error):
        """Slurm's state of a failed NODE with the reason; a failure of scontrol itself is logged too."""
        try:
            scontrol_update('NodeName=%s' % node, 'State=%s' % state,
                            'Reason=gpuops %s failed: %s' % (args.action, error[:150]))
        except Exception as e:  # pylint: disable=broad-except  # logged, the other nodes go on
            log('%s: %s' % (node, _slurm_power.describe_error(e)))

    def resumed(node, address, error):
        if error:
            failed.append(node)
            log('%s FAILED: %s' % (node, error))
            tell_slurm(node, 'POWER_DOWN_FORCE', error)
        else:
            log('%s up at %s' % (node, address))

    def suspended(node, ended, error):
        if error:
            failed.append(node)
            log('%s FAILED: %s' % (node, error))
            tell_slurm(node, 'DOWN', error)
        else:
            log('%s ended (%s)' % (node, ', '.join(ended) or 'no instance'))

    report = resumed if args.action == 'resume' else suspended
    if backend is None:
        for node in nodes:
            report(node, '' if args.action == 'resume' else [], backend_error)
    elif args.action == 'resume':
        _slurm_power.resume(
            nodes, backend, lambda node, address: scontrol_update('NodeName=%s' % node, 'NodeAddr=%s' % address,
                                                                  'NodeHostname=%s' % node), report)
    else:
        _slurm_power.suspend(nodes, backend, report)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
