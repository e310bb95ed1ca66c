# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The one place where the lower floor meets AnsibleModule: shared options and the host read.

gpu_facts, gpu_health and cuda_compat read the host the same way, with the same options.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _command
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _facts
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _nvidia_smi

# Where distributions and NVIDIA's installers put nvidia-smi and lspci besides PATH.
BIN_DIRS = ['/usr/bin', '/usr/sbin', '/sbin', '/usr/local/bin', '/usr/local/nvidia/bin']

HOST_ARGUMENT_SPEC = dict(
    nvidia_smi_path=dict(type='path'),
    timeout=dict(type='int', default=30),
    sysfs_root=dict(type='path', default='/sys'),
)


def host_argument_spec(**extra):
    spec = dict((k, dict(v)) for k, v in HOST_ARGUMENT_SPEC.items())
    spec.update(extra)
    return spec


def at_least(module, minimum, *names):
    """Fail the module, naming the option, when one of the int options ``names`` is below ``minimum``."""
    for name in names:
        v = module.params.get(name)
        if v is not None and v < minimum:
            module.fail_json(msg='%s must be %s, got %s' % (
                name, 'a positive number' if minimum == 1 else '%s or more' % minimum, v))


def gather_facts(module):
    """One read of the host; fails the module on a hung or unreadable nvidia-smi."""
    at_least(module, 1, 'timeout')
    path = module.params['nvidia_smi_path'] or module.get_bin_path('nvidia-smi', opt_dirs=BIN_DIRS)
    lspci = module.get_bin_path('lspci', opt_dirs=BIN_DIRS)
    try:
        return _facts.gather(path, timeout=module.params['timeout'], sysfs_root=module.params['sysfs_root'],
                             lspci_path=lspci)
    except _command.CommandTimeout as e:
        module.fail_json(msg='%s: a hung nvidia-smi usually means a GPU or the driver is stuck; look for Xid '
                             'errors in the kernel log' % e)
    except _command.CommandOutputTooLarge as e:
        module.fail_json(msg='%s: that is not an nvidia-smi report' % e)
    except _nvidia_smi.NvidiaSmiParseError as e:
        module.fail_json(msg='nvidia-smi -q -x printed output that could not be read: %s' % e)
