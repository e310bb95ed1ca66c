# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Jinja2 filters answering GPU software compatibility questions (documented in the adjacent <filter>.yml files)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_cuda
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_gpu
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_torch
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _compat_versions
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _gpu_lookup


def _version_text(name, value, example):
    """A version as text; a float that lost a trailing zero (12.10 read as 12.1) is refused: quote it."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise AnsibleFilterError('%s: expected a version string such as %s, got %s' % (name, example, _compat_versions.short_repr(value)))
    try:
        return _compat_versions.version_text(value, 'version', example)
    except ValueError as e:
        raise AnsibleFilterError('%s: %s' % (name, e))


def cuda_min_driver(cuda, mode='toolkit'):
    """Minimum Linux driver for a CUDA toolkit version."""
    cuda = _version_text('cuda_min_driver', cuda, '"12.4"')
    if mode not in ('toolkit', 'minor'):
        raise AnsibleFilterError("cuda_min_driver: mode must be 'toolkit' or 'minor', got %s" % _compat_versions.short_repr(mode))
    try:
        return _compat_cuda.cuda_min_driver(cuda, mode)
    except ValueError as e:
        raise AnsibleFilterError('cuda_min_driver: %s' % e)


def cuda_driver_compatible(driver, cuda, minor=False):
    """Whether a driver version runs a CUDA version (optionally through minor version compatibility)."""
    driver = _version_text('cuda_driver_compatible', driver, '"535.104.05"')
    cuda = _version_text('cuda_driver_compatible', cuda, '"12.2"')
    if not isinstance(minor, bool):
        raise AnsibleFilterError('cuda_driver_compatible: minor must be a boolean, got %s' % _compat_versions.short_repr(minor))
    try:
        return _compat_cuda.cuda_driver_compatible(driver, cuda, minor=minor)
    except ValueError as e:
        raise AnsibleFilterError('cuda_driver_compatible: %s' % e)


def gpu_architecture(pci_id_or_name):
    """Architecture of a PCI id (10de:2330), chip code name (GP108) or product name; fails when unknown."""
    if not isinstance(pci_id_or_name, str) or not pci_id_or_name.strip():
        raise AnsibleFilterError('gpu_architecture: expected a PCI id such as "10de:2330", a chip code name such as '
                                 '"GH100" or a product name such as "NVIDIA H100 80GB HBM3", got %s'
                                 % _compat_versions.short_repr(pci_id_or_name))
    arch = _compat_gpu.gpu_architecture(pci_id_or_name)
    if arch is None:
        if _gpu_lookup.normalize_pci_id(pci_id_or_name) is not None:
            raise AnsibleFilterError(
                'gpu_architecture: PCI id %s is not in the table of known NVIDIA GPUs; expected the id of an NVIDIA '
                'GPU such as "10de:2330", or use the architecture that gpuops.gpu_server.gpu_facts reports from the '
                "host's PCI ID database (ansible_facts.nvidia.gpus[].architecture)" % _compat_versions.short_repr(pci_id_or_name))
        raise AnsibleFilterError(
            'gpu_architecture: no GPU architecture is known for %s; expected an NVIDIA product name such as '
            '"NVIDIA H100 80GB HBM3", a chip code name such as "GP108", or a PCI id such as "10de:2330"'
            % _compat_versions.short_repr(pci_id_or_name))
    return arch


def driver_supports_architecture(driver, architecture):
    """Whether a driver branch or version drives GPUs of an architecture."""
    if isinstance(driver, bool) or not isinstance(driver, (str, int, float)):
        raise AnsibleFilterError('driver_supports_architecture: expected a driver branch such as "535" or a version '
                                 'such as "535.104.05", got %s' % _compat_versions.short_repr(driver))
    try:
        return _compat_gpu.driver_supports_architecture(driver, architecture)
    except ValueError as e:
        raise AnsibleFilterError('driver_supports_architecture: %s' % e)


def torch_cuda_variants(torch_version):
    """The CUDA wheel variants (cu118 ...) published for a PyTorch release."""
    torch_version = _version_text('torch_cuda_variants', torch_version, '"2.4.1"')
    try:
        return _compat_torch.torch_cuda_variants(torch_version)
    except ValueError as e:
        raise AnsibleFilterError('torch_cuda_variants: %s' % e)


class FilterModule(object):
    def filters(self):
        return {
            'cuda_min_driver': cuda_min_driver,
            'cuda_driver_compatible': cuda_driver_compatible,
            'gpu_architecture': gpu_architecture,
            'driver_supports_architecture': driver_supports_architecture,
            'torch_cuda_variants': torch_cuda_variants,
        }
