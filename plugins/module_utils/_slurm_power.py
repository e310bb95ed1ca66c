# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Slurm power saving's ResumeProgram and SuspendProgram: start the instance of each CLOUD node Slurm wakes, and end it
when Slurm lets the node go.

Slurm (slurm.conf(5) ResumeProgram, SuspendProgram; "Slurm Power Saving Guide") runs the program with one argument, a
hostlist of the nodes to resume or suspend, as SlurmUser on the controller. A resumed node must register with slurmd
within ResumeTimeout, from the address the program gives it (``scontrol update NodeName=x NodeAddr=ip
NodeHostname=x``).

Backends, each keyed by the node's name so that a second resume of a node finds its instance instead of starting
another, and a suspend ends only the cluster's own instances:

- ``Ec2Backend``: AWS EC2 from a launch template (``RunInstances``), the node's name in the tags ``Name``,
  ``gpuops:slurm-node`` and ``gpuops:slurm-cluster``; the node's address is the instance's private IPv4 address.
  Suspend: ``TerminateInstances`` of the instances with those tags.
- ``DockerBackend``: a container per node (``docker run``, named after the node, labelled with the cluster) on one
  Docker network; its address is its address on that network. Suspend: ``docker rm -f``.

First boot: each backend hands the new instance the user-data of the settings, with ``@GPUOPS_SLURM_NODE@`` replaced by
the node's name (``node_user_data``): EC2 as the instance's user-data, which cloud-init runs; Docker as the file
``/var/lib/gpuops/slurm-user-data`` in the container before it starts, which the node image's
gpuops-slurm-first-boot.service runs (the slurm role's cloud_image entry point). The script joins the node to the
cluster (roles/slurm/templates/slurm-user-data.j2).

Used by the slurm role's gpuops-slurm-power (roles/slurm/files/gpuops-slurm-power.py) on the controller. The EC2
client comes from the caller (boto3 there, moto in the unit tests).

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import tempfile

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command

TAG_NODE = 'gpuops:slurm-node'
TAG_CLUSTER = 'gpuops:slurm-cluster'
LABEL_CLUSTER = 'gpuops.slurm-cluster'
# EC2 instance states that hold (or will hold) the node: a resume reuses such an instance, a suspend ends it.
EC2_LIVE_STATES = ('pending', 'running', 'stopping', 'stopped')
# The placeholder of the node's name in the user-data, and where the Docker backend puts the user-data.
NODE_PLACEHOLDER = '@GPUOPS_SLURM_NODE@'
DOCKER_USER_DATA = '/var/lib/gpuops/slurm-user-data'


class PowerError(Exception):
    """A backend could not start or end a node's instance; the message names the node and the cause."""


def node_user_data(template, node):
    """The user-data of NODE: TEMPLATE with each NODE_PLACEHOLDER replaced by the node's name ('' stays '')."""
    return (template or '').replace(NODE_PLACEHOLDER, node)


class Ec2Backend(object):
    """CLOUD nodes as EC2 instances of one launch template."""

    def __init__(self, client, cluster, launch_template, user_data='', subnet_id='', tags=None):
        if not launch_template:
            raise PowerError('the EC2 backend needs a launch template (its id lt-..., or its name)')
        self.client = client
        self.cluster = cluster
        self.template = ({'LaunchTemplateId': launch_template} if launch_template.startswith('lt-')
                         else {'LaunchTemplateName': launch_template})
        self.user_data = user_data
        self.subnet_id = subnet_id
        self.tags = dict(tags or {})

    def _instances(self, nodes):
        """{node: [instance]} of the cluster's live instances of NODES."""
        found = dict((node, []) for node in nodes)
        filters = [{'Name': 'tag:' + TAG_CLUSTER, 'Values': [self.cluster]},
                   {'Name': 'tag:' + TAG_NODE, 'Values': list(nodes)},
                   {'Name': 'instance-state-name', 'Values': list(EC2_LIVE_STATES)}]
        for page in self.client.get_paginator('describe_instances').paginate(Filters=filters):
            for reservation in page.get('Reservations', []):
                for instance in reservation.get('Instances', []):
                    tags = dict((t['Key'], t['Value']) for t in instance.get('Tags', []))
                    if tags.get(TAG_NODE) in found:
                        found[tags[TAG_NODE]].append(instance)
        return found

    def start(self, node):
        """The node's private address: of its live instance where it has one, else of a new one."""
        live = self._instances([node])[node]
        if live:
            instance = live[0]
        else:
            tags = dict(self.tags)
            tags.update({'Name': node, TAG_NODE: node, TAG_CLUSTER: self.cluster})
            request = {'LaunchTemplate': self.template, 'MinCount': 1, 'MaxCount': 1,
                       'TagSpecifications': [{'ResourceType': 'instance',
                                              'Tags': [{'Key': k, 'Value': v} for k, v in sorted(tags.items())]}]}
            if self.user_data:
                request['UserData'] = node_user_data(self.user_data, node)
            if self.subnet_id:
                request['SubnetId'] = self.subnet_id
            try:
                instance = self.client.run_instances(**request)['Instances'][0]
            except Exception as e:  # pylint: disable=broad-except  # botocore's errors, named in the message
                raise PowerError('%s: RunInstances failed: %s' % (node, e))
        address = instance.get('PrivateIpAddress')
        if not address:
            raise PowerError('%s: instance %s has no private IPv4 address' % (node, instance.get('InstanceId')))
        return address

    def stop(self, nodes):
        """End the cluster's instances of NODES; the ids ended."""
        ids = [i['InstanceId'] for instances in self._instances(nodes).values() for i in instances]
        if ids:
            try:
                self.client.terminate_instances(InstanceIds=ids)
            except Exception as e:  # pylint: disable=broad-except  # botocore's errors, named in the message
                raise PowerError('%s: TerminateInstances failed: %s' % (', '.join(nodes), e))
        return ids


class DockerBackend(object):
    """CLOUD nodes as containers of one image on one Docker network (the test backend, and a lab's)."""

    def __init__(self, cluster, image, network, run_args=(), docker='docker', runner=None, timeout=120, user_data='',
                 command=()):
        if not image or not network:
            raise PowerError('the docker backend needs an image and a network')
        self.cluster = cluster
        self.user_data = user_data
        self.command = list(command)
        self.image = image
        self.network = network
        self.run_args = list(run_args)
        self.docker = docker
        self.runner = runner or _command.run
        self.timeout = timeout

    def _run(self, node, argv):
        try:
            rc, out, err = self.runner([self.docker] + argv, timeout=self.timeout)
        except _command.CommandError as e:
            raise PowerError('%s: %s' % (node, e))
        return rc, out, err

    def _address(self, node):
        rc, out, err = self._run(node, ['container', 'inspect', node])
        if rc != 0:
            return None, (err or out).strip()
        info = json.loads(out)[0]
        labels = info.get('Config', {}).get('Labels') or {}
        if labels.get(LABEL_CLUSTER) != self.cluster:
            raise PowerError('%s: a container of that name exists but is not of cluster %s (label %s): left alone'
                             % (node, self.cluster, LABEL_CLUSTER))
        network = (info.get('NetworkSettings', {}).get('Networks') or {}).get(self.network) or {}
        return network.get('IPAddress') or None, '' if info.get('State', {}).get('Running') else 'not running'

    def start(self, node):
        address, why = self._address(node)
        if address is None or why:
            if why == 'not running':
                self._run(node, ['rm', '-f', node])
            self._create(node)
            address, why = self._address(node)
        if not address:
            raise PowerError('%s: the container has no address on network %s (%s)' % (node, self.network, why))
        return address

    def _create(self, node):
        """Create NODE's container, give it its user-data, start it."""
        argv = (['create', '--name', node, '--hostname', node, '--network', self.network,
                 '--label', '%s=%s' % (LABEL_CLUSTER, self.cluster)] + self.run_args + [self.image] + self.command)
        rc, out, err = self._run(node, argv)
        if rc != 0:
            raise PowerError('%s: docker create failed: %s' % (node, (err or out).strip()))
        steps = []
        if self.user_data:
            with tempfile.NamedTemporaryFile('w', prefix='gpuops-user-data-', delete=False) as f:
                f.write(node_user_data(self.user_data, node))
            os.chmod(f.name, 0o700)
            steps.append(('docker cp', ['cp', f.name, '%s:%s' % (node, DOCKER_USER_DATA)]))
        steps.append(('docker start', ['start', node]))
        try:
            for what, step in steps:
                rc, out, err = self._run(node, step)
                if rc != 0:
                    self._run(node, ['rm', '-f', node])
                    raise PowerError('%s: %s failed: %s' % (node, what, (err or out).strip()))
        finally:
            if self.user_data:
                os.unlink(f.name)

    def stop(self, nodes):
        ended = []
        for node in nodes:
            rc, label, _err = self._run(node, ['container', 'inspect', '-f', '{{index .Config.Labels "%s"}}' % LABEL_CLUSTER,
                                               node])
            if rc == 0 and label.strip() == self.cluster:
                rc, out, err = self._run(node, ['rm', '-f', node])
                if rc != 0:
                    raise PowerError('%s: docker rm failed: %s' % (node, (err or out).strip()))
                ended.append(node)
        return ended


def resume(nodes, backend, set_address):
    """Start each of NODES through BACKEND and give Slurm its address (SET_ADDRESS(node, address)). Returns
    [(node, address, error)], one per node: a node that failed does not stop the others."""
    out = []
    for node in nodes:
        try:
            address = backend.start(node)
            set_address(node, address)
            out.append((node, address, ''))
        except PowerError as e:
            out.append((node, '', str(e)))
    return out
