# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filter health_table (documented in health_table.yml)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _health

_LINE = '%-24s %-3s %-28s %-6s %s'
HEADER = ('HOST', 'GPU', 'NAME', 'STATUS', 'FAILING CHECKS')


def health_table(results):
    """Lines of a table, one per host and GPU (plus host-wide rows), from ``{host: gpu_health result}``."""
    if not isinstance(results, Mapping):
        raise AnsibleFilterError('health_table: expected a mapping of host name to gpu_health result, got %r'
                                 % (type(results).__name__,))
    lines = [_LINE % HEADER]
    for host in sorted(results):
        result = results[host]
        if result is not None and not isinstance(result, Mapping):
            raise AnsibleFilterError('health_table: the result of %s is not a gpu_health result: %r' % (host, result))
        for row in _health.summary(result):
            wide = row['gpu'] is None
            lines.append(_LINE % (host, '-' if wide else row['gpu'], row['name'] or ('-' if wide else '?'),
                                  row['status'], ', '.join(row['failing']) or '-'))
    return lines


class FilterModule(object):
    def filters(self):
        return {'health_table': health_table}
