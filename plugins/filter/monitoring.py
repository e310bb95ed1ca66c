# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filter monitoring_scrape_mismatches (documented in monitoring_scrape_mismatches.yml)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _monitoring


def monitoring_scrape_mismatches(hosts, hostvars, tls, web_auth, web_user):
    """The GPU nodes among ``hosts`` whose inventory serves TLS, basic auth or the user another way than the server
    scrapes (_monitoring.scrape_mismatches), as messages; reads only the variables that matter from ``hostvars``."""
    if not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError('monitoring_scrape_mismatches: the hosts must be a list of inventory names, not %s'
                                 % type(hosts).__name__)
    nodes = {}
    try:
        for host in hosts:
            variables = hostvars[host]
            nodes[host] = dict((name, variables[name]) for _setting, names in _monitoring.SETTINGS
                               for name in names if name in variables)
        return _monitoring.scrape_mismatches(nodes, tls, web_auth, web_user)
    except _monitoring.MonitoringError as e:
        raise AnsibleFilterError('monitoring_scrape_mismatches: %s' % e)
    except KeyError as e:
        raise AnsibleFilterError('monitoring_scrape_mismatches: no host variables for %s in the inventory' % e)


class FilterModule(object):
    def filters(self):
        return {'monitoring_scrape_mismatches': monitoring_scrape_mismatches}
