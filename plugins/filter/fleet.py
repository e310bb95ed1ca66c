# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Filters fleet_report, fleet_report_markdown, fleet_report_html and fleet_report_summary (documented in
fleet_report.yml, fleet_report_markdown.yml, fleet_report_html.yml and fleet_report_summary.yml)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _fleet
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _fleet_render


def _call(name, function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except _fleet.FleetReportError as e:
        raise AnsibleFilterError('%s: %s' % (name, e))


def fleet_report(results, unreachable=None, window=None, generated=None):
    """The fleet report (one record per GPU, sick first) from ``{host: gpu_health result}`` and the lost hosts."""
    return _call('fleet_report', _fleet.build, results, unreachable=unreachable, generated=generated, window=window)


def fleet_report_markdown(report):
    """The report as a Markdown document."""
    return _call('fleet_report_markdown', _fleet_render.to_markdown, report)


def fleet_report_html(report):
    """The report as one self-contained HTML page."""
    return _call('fleet_report_html', _fleet_render.to_html, report)


def fleet_report_summary(report):
    """The report as the lines of a one-screen console summary."""
    return _call('fleet_report_summary', _fleet_render.console_summary, report)


class FilterModule(object):
    def filters(self):
        return {
            'fleet_report': fleet_report,
            'fleet_report_markdown': fleet_report_markdown,
            'fleet_report_html': fleet_report_html,
            'fleet_report_summary': fleet_report_summary,
        }
