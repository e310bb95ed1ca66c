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
  ``gpuops:slurm-node`` and ``gpuops:slurm-cluster``; the node's address is the instance's private IPv4 address. A
  node whose instance is ``stopped`` (a spot stop, an operator's stop) is started again (``StartInstances``), one that
  is ``stopping`` once it has stopped (waited for a bounded time). Suspend: ``TerminateInstances`` of the instances
  with those tags, the nodes looked up ``EC2_FILTER_CHUNK`` names per request.
- ``DockerBackend``: a container per node (``docker run``, named after the node, labelled with the cluster) on one
  Docker network; its address is its address on that network. Suspend: ``docker rm -f``.

First boot: each backend hands the new instance the user-data of the settings, with ``@GPUOPS_SLURM_NODE@`` replaced by
the node's name (``node_user_data``): EC2 as the instance's user-data, which cloud-init runs; Docker as the file
``/var/lib/gpuops/slurm-user-data`` in the container before it starts, which the node image's
gpuops-slurm-first-boot.service runs (the slurm role's cloud_image entry point). The script joins the node to the
cluster (roles/slurm/templates/slurm-user-data.j2).

Errors are per node: ``resume`` and ``suspend`` turn any exception of a node's calls (botocore's ClientError,
NoCredentialsError, EndpointConnectionError, an unexpected answer of docker) into that node's error and go on with the
next node, telling the caller about each node as it is done (``report``).

Used by the slurm role's gpuops-slurm-power (roles/slurm/files/gpuops-slurm-power.py) on the controller. The EC2
client comes from the caller (boto3 there, moto in the unit tests).

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json
import os
import re
import tempfile
import time

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command

TAG_NODE = 'gpuops:slurm-node'
TAG_CLUSTER = 'gpuops:slurm-cluster'
LABEL_CLUSTER = 'gpuops.slurm-cluster'
# EC2 instance states that hold (or will hold) the node: a resume reuses such an instance, a suspend ends it.
EC2_LIVE_STATES = ('pending', 'running', 'stopping', 'stopped')
# Node names per DescribeInstances filter. AWS's reference of the Filter type names no maximum of values
# (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_Filter.html), but EC2 refuses a request with too many
# filter values (FilterLimitExceeded, "the request uses too many filters or too many filter values"); the limit seen
# in practice is 200 values per filter (issue 52; apache/druid#1954 chunks EC2 filters at 100 for it). 100 stays well
# under it, and is also the instance ids per TerminateInstances request here.
EC2_FILTER_CHUNK = 100
# A launch template is given either by name or by id, never guessed from its spelling (a name may start with lt-).
# Names: 3 to 128 of letters, digits, ( ) . - / _ (LaunchTemplateName in
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_LaunchTemplate.html); ids: lt- and hex digits (17 in
# today's long ids, 8 in the short ones EC2 used before 2018).
EC2_TEMPLATE_NAME = re.compile(r'[A-Za-z0-9().\-/_]{3,128}\Z')
EC2_TEMPLATE_ID = re.compile(r'lt-[0-9a-f]{8,17}\Z')
# Seconds a resume waits, in all, for instances that are stopping before it starts them again, and between looks.
EC2_STOPPING_WAIT = 240
EC2_STOPPING_POLL = 5
# The placeholder of the node's name in the user-data, and where the Docker backend puts the user-data.
NODE_PLACEHOLDER = '@GPUOPS_SLURM_NODE@'
DOCKER_USER_DATA = '/var/lib/gpuops/slurm-user-data'


class PowerError(Exception):
    """A backend could not start or end a node's instance; the message names the node and the cause."""


def node_user_data(template, node):
    """The user-data of NODE: TEMPLATE with each NODE_PLACEHOLDER replaced by the node's name ('' stays '')."""
    return (template or '').replace(NODE_PLACEHOLDER, node)


def one_line(text):
    """TEXT on one line (a log line per node, a Slurm reason): line breaks and runs of blanks become one space."""
    return ' '.join(str(text).split())


def describe_error(error):
    """An exception as one line with its type (ClientError: An error occurred (...)...), for a node's error."""
    if isinstance(error, PowerError):
        return one_line(error)
    return one_line('%s: %s' % (type(error).__name__, error))


def launch_template_spec(name='', template_id='', names=('launch_template', 'launch_template_id')):
    """RunInstances' LaunchTemplate of a template given by NAME or by TEMPLATE_ID (exactly one of them): a name is
    always sent as LaunchTemplateName, an id as LaunchTemplateId. Raises PowerError naming the setting (NAMES: what
    the two are called where they come from) and the fix."""
    name_key, id_key = names
    name = '' if name is None else name
    template_id = '' if template_id is None else template_id
    for what, value in ((name_key, name), (id_key, template_id)):
        if not isinstance(value, str):
            raise PowerError('%s: expected a string, got %r' % (what, value))
    if name and template_id:
        raise PowerError('%s (%r) and %s (%r) are both set: give the launch template by its name or by its id, not '
                         'both' % (name_key, name, id_key, template_id))
    if template_id:
        if not EC2_TEMPLATE_ID.match(template_id):
            raise PowerError('%s %r is not a launch template id (lt- and 8 to 17 hex digits, lt-0123456789abcdef0); '
                             'give a name as %s' % (id_key, template_id, name_key))
        return {'LaunchTemplateId': template_id}
    if not name:
        raise PowerError('the EC2 backend needs a launch template: %s (its name) or %s (its id, lt-...)'
                         % (name_key, id_key))
    if EC2_TEMPLATE_ID.match(name):
        raise PowerError('%s %r has the form of a launch template id: give an id as %s (%s is always sent as a name)'
                         % (name_key, name, id_key, name_key))
    if not EC2_TEMPLATE_NAME.match(name):
        raise PowerError('%s %r is not a launch template name (3 to 128 of letters, digits and ( ) . - / _)'
                         % (name_key, name))
    return {'LaunchTemplateName': name}


def _chunks(items, size):
    items = list(items)
    return [items[i:i + size] for i in range(0, len(items), size)]


def _tags(instance):
    return dict((t.get('Key'), t.get('Value')) for t in instance.get('Tags') or [])


def _state(instance):
    return (instance.get('State') or {}).get('Name', '')


class Ec2Backend(object):
    """CLOUD nodes as EC2 instances of one launch template."""

    # Which of a node's live instances a resume uses: a running one first, a stopped one before one still stopping.
    _PREFERENCE = ('running', 'pending', 'stopped', 'stopping')

    def __init__(self, client, cluster, launch_template='', user_data='', subnet_id='', tags=None,
                 launch_template_id='', stopping_wait=EC2_STOPPING_WAIT, poll=EC2_STOPPING_POLL, sleep=time.sleep,
                 clock=time.monotonic):
        self.client = client
        self.cluster = cluster
        self.template = launch_template_spec(launch_template, launch_template_id)
        self.user_data = user_data
        self.subnet_id = subnet_id
        self.tags = dict(tags or {})
        self.stopping_wait = stopping_wait
        self.poll = poll
        self.sleep = sleep
        self.clock = clock
        self._wait_until = None

    def _instances(self, nodes):
        """{node: [instance]} of the cluster's live instances of NODES (at most EC2_FILTER_CHUNK names)."""
        found = dict((node, []) for node in nodes)
        filters = [{'Name': 'tag:' + TAG_CLUSTER, 'Values': [self.cluster]},
                   {'Name': 'tag:' + TAG_NODE, 'Values': list(nodes)},
                   {'Name': 'instance-state-name', 'Values': list(EC2_LIVE_STATES)}]
        for page in self.client.get_paginator('describe_instances').paginate(Filters=filters):
            for reservation in page.get('Reservations', []):
                for instance in reservation.get('Instances', []):
                    tags = _tags(instance)
                    if tags.get(TAG_NODE) in found and tags.get(TAG_CLUSTER) == self.cluster:
                        found[tags[TAG_NODE]].append(instance)
        return found

    def _describe(self, instance_id):
        """The instance's description now."""
        for reservation in self.client.describe_instances(InstanceIds=[instance_id]).get('Reservations', []):
            for instance in reservation.get('Instances', []):
                if instance.get('InstanceId') == instance_id:
                    return instance
        raise PowerError('instance %s is no longer described by EC2' % instance_id)

    def _wait_stopped(self, node, instance):
        """INSTANCE (stopping) once it has stopped; the wait of all nodes of one run together is bounded by
        stopping_wait seconds."""
        if self._wait_until is None:
            self._wait_until = self.clock() + self.stopping_wait
        while _state(instance) == 'stopping':
            if self.clock() >= self._wait_until:
                raise PowerError('%s: instance %s is still stopping (a resume waits at most %s s for stopping '
                                 'instances); a later resume starts it' % (node, instance.get('InstanceId'),
                                                                           self.stopping_wait))
            self.sleep(self.poll)
            instance = self._describe(instance['InstanceId'])
        return instance

    def _launch(self, node):
        tags = dict(self.tags)
        tags.update({'Name': node, TAG_NODE: node, TAG_CLUSTER: self.cluster})
        request = {'LaunchTemplate': dict(self.template), 'MinCount': 1, 'MaxCount': 1,
                   'TagSpecifications': [{'ResourceType': 'instance',
                                          'Tags': [{'Key': k, 'Value': v} for k, v in sorted(tags.items())]}]}
        if self.user_data:
            request['UserData'] = node_user_data(self.user_data, node)
        if self.subnet_id:
            request['SubnetId'] = self.subnet_id
        try:
            return self.client.run_instances(**request)['Instances'][0]
        except Exception as e:  # pylint: disable=broad-except  # botocore's errors, named in the message
            raise PowerError('%s: RunInstances failed: %s' % (node, describe_error(e)))

    def start(self, node):
        """The node's private address: of its live instance where it has one (started again where it is stopped or
        stopping), else of a new one."""
        try:
            live = self._instances([node])[node]
        except Exception as e:  # pylint: disable=broad-except  # botocore's errors, named in the message
            raise PowerError('%s: DescribeInstances failed: %s' % (node, describe_error(e)))
        live.sort(key=lambda i: self._PREFERENCE.index(_state(i)) if _state(i) in self._PREFERENCE else 99)
        if not live:
            instance = self._launch(node)
        else:
            instance = live[0]
            if _state(instance) in ('stopping', 'stopped'):
                instance = self._start_stopped(node, instance)
        address = instance.get('PrivateIpAddress')
        if not address:
            raise PowerError('%s: instance %s has no private IPv4 address' % (node, instance.get('InstanceId')))
        return address

    def _start_stopped(self, node, instance):
        """INSTANCE (stopped or stopping) started again, as EC2 describes it afterwards (its current address)."""
        instance_id = instance.get('InstanceId')
        try:
            instance = self._wait_stopped(node, instance)
            if _state(instance) == 'stopped':
                self.client.start_instances(InstanceIds=[instance_id])
            instance = self._describe(instance_id)
        except PowerError:
            raise
        except Exception as e:  # pylint: disable=broad-except  # botocore's errors, named in the message
            raise PowerError('%s: starting the stopped instance %s failed: %s' % (node, instance_id, describe_error(e)))
        if _state(instance) not in ('pending', 'running'):
            raise PowerError('%s: instance %s is %s after StartInstances' % (node, instance_id, _state(instance)))
        return instance

    def stop(self, nodes, report=None):
        """End the cluster's instances of NODES, EC2_FILTER_CHUNK nodes per request: [(node, [instance id], error)],
        each also given to REPORT(node, ids, error) as soon as its chunk is done. A request that fails for a chunk is
        made again node by node, so that one node's error (an instance protected from termination) stays that
        node's."""
        out = []
        for chunk in _chunks(nodes, EC2_FILTER_CHUNK):
            for result in self._stop_chunk(chunk):
                out.append(result)
                if report is not None:
                    report(*result)
        return out

    def _stop_chunk(self, nodes):
        errors = {}
        try:
            found = self._instances(nodes)
        except Exception:  # pylint: disable=broad-except  # asked again node by node, each error named there
            found = {}
            for node in nodes:
                try:
                    found.update(self._instances([node]))
                except Exception as e:  # pylint: disable=broad-except  # botocore's errors, named in the message
                    errors[node] = '%s: DescribeInstances failed: %s' % (node, describe_error(e))
        ids = dict((node, [i['InstanceId'] for i in found.get(node, [])]) for node in nodes)
        everything = [i for node in nodes for i in ids[node]]
        try:
            if everything:
                self.client.terminate_instances(InstanceIds=everything)
        except Exception:  # pylint: disable=broad-except  # ended again node by node, each error named there
            for node in nodes:
                try:
                    if ids[node] and node not in errors:
                        self.client.terminate_instances(InstanceIds=ids[node])
                except Exception as e:  # pylint: disable=broad-except  # botocore's errors, named in the message
                    errors[node] = '%s: TerminateInstances %s failed: %s' % (
                        node, ', '.join(ids[node]), describe_error(e))
        return [(node, [] if node in errors else ids[node], errors.get(node, '')) for node in nodes]


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

    def _inspect(self, node, out):
        """The container of ``docker container inspect NODE``'s answer OUT: a list of one object. Anything else is
        this node's PowerError, with the start of the answer."""
        try:
            info = json.loads(out)
        except ValueError as e:
            raise PowerError('%s: docker container inspect answered no JSON (%s): %r' % (node, e, out[:200]))
        if not isinstance(info, list) or len(info) != 1 or not isinstance(info[0], dict):
            raise PowerError('%s: docker container inspect answered %r, not one container' % (node, out[:200]))
        info = info[0]
        for key in ('Config', 'State', 'NetworkSettings'):
            if not isinstance(info.get(key), dict):
                raise PowerError('%s: docker container inspect answered no %s object: %r' % (node, key, out[:200]))
        return info

    def _address(self, node):
        rc, out, err = self._run(node, ['container', 'inspect', node])
        if rc != 0:
            return None, (err or out).strip()
        info = self._inspect(node, out)
        labels = info['Config'].get('Labels') or {}
        if not isinstance(labels, dict) or labels.get(LABEL_CLUSTER) != self.cluster:
            raise PowerError('%s: a container of that name exists but is not of cluster %s (label %s): left alone'
                             % (node, self.cluster, LABEL_CLUSTER))
        networks = info['NetworkSettings'].get('Networks') or {}
        network = networks.get(self.network) if isinstance(networks, dict) else None
        address = network.get('IPAddress') if isinstance(network, dict) else None
        if address is not None and not isinstance(address, str):
            raise PowerError('%s: docker container inspect answered the address %r' % (node, address))
        return address or None, '' if info['State'].get('Running') is True else 'not running'

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

    def _stop_one(self, node):
        """The containers ended for NODE: [NODE] where it had one of this cluster, [] where it had none."""
        rc, label, _err = self._run(node, ['container', 'inspect', '-f', '{{index .Config.Labels "%s"}}' % LABEL_CLUSTER,
                                           node])
        if rc == 0 and label.strip() == self.cluster:
            rc, out, err = self._run(node, ['rm', '-f', node])
            if rc != 0:
                raise PowerError('%s: docker rm failed: %s' % (node, (err or out).strip()))
            return [node]
        return []

    def stop(self, nodes, report=None):
        """End the cluster's containers of NODES: [(node, [container], error)], each also given to REPORT(node,
        containers, error) as it is done."""
        out = []
        for node in nodes:
            try:
                result = (node, self._stop_one(node), '')
            except Exception as e:  # pylint: disable=broad-except  # one node's error, named in the message
                result = (node, [], describe_error(e) if isinstance(e, PowerError) else '%s: %s' % (node, describe_error(e)))
            out.append(result)
            if report is not None:
                report(*result)
        return out


def resume(nodes, backend, set_address, report=None):
    """Start each of NODES through BACKEND and give Slurm its address (SET_ADDRESS(node, address)). Returns
    [(node, address, error)], one per node, each also given to REPORT(node, address, error) as soon as that node is
    done: a node that fails (any exception of its backend calls or of SET_ADDRESS) does not stop the others."""
    out = []
    for node in nodes:
        try:
            address = backend.start(node)
            set_address(node, address)
            result = (node, address, '')
        except PowerError as e:
            result = (node, '', describe_error(e))
        except Exception as e:  # pylint: disable=broad-except  # any other error is this node's, named in the message
            result = (node, '', '%s: %s' % (node, describe_error(e)))
        out.append(result)
        if report is not None:
            report(*result)
    return out


def suspend(nodes, backend, report=None):
    """End the instances of NODES through BACKEND: [(node, [instance], error)], each also given to REPORT as it is
    done. An error of the backend as a whole (no answer at all) is every node's error."""
    done = []

    def reported(node, ended, error):
        done.append((node, ended, error))
        if report is not None:
            report(node, ended, error)

    try:
        backend.stop(nodes, reported)
    except Exception as e:  # pylint: disable=broad-except  # the backends report per node; this is the safety net
        error = describe_error(e)
        seen = set(node for node, _ended, _error in done)
        for node in nodes:
            if node not in seen:
                reported(node, [], '%s: %s' % (node, error))
    return done
