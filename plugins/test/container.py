# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

# ansible_facts['virtualization_type'] values of a container guest, whose kernel belongs to the host.
CONTAINER_TYPES = frozenset(['docker', 'container', 'podman', 'lxc', 'openvz', 'containerd', 'systemd-nspawn'])


def container(facts):
    """True when the gathered facts describe a container guest (the kernel and clock belong to the host)."""
    if not isinstance(facts, dict):
        raise AnsibleFilterError('container expects ansible_facts (a dict), got %s' % type(facts).__name__)
    return (facts.get('virtualization_role') == 'guest'
            and facts.get('virtualization_type') in CONTAINER_TYPES)


class TestModule(object):
    def tests(self):
        return {'container': container}
