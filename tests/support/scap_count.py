# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Count an XCCDF results file's rule results (oscap xccdf eval --results): python3 scap_count.py RESULTS.xml prints
{"results": {result: count}, "failed": [rule ids that failed, erred or are unknown], "applicable": n, "percent": p},
where the applicable rules are those that passed, failed, erred or are unknown, and p is the share of them that
passed. Standard library only: molecule/site's tests run it inside the instance (python3 -c with this file's text),
tests/vm/server.sh on the controller."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import collections
import json
import sys
import xml.etree.ElementTree as ET

NS = "{http://checklists.nist.gov/xccdf/1.2}"
APPLICABLE = ("pass", "fail", "error", "unknown")


def count(path):
    results = collections.Counter()
    failed = []
    for rule in ET.parse(path).getroot().iter(NS + "rule-result"):
        result = rule.find(NS + "result").text
        results[result] += 1
        if result in APPLICABLE[1:]:
            failed.append(rule.get("idref").replace("xccdf_org.ssgproject.content_rule_", ""))
    applicable = sum(results[key] for key in APPLICABLE)
    percent = round(100.0 * results["pass"] / applicable, 2) if applicable else 0.0
    return {"results": dict(results), "failed": sorted(failed), "applicable": applicable, "percent": percent}


if __name__ == "__main__":
    print(json.dumps(count(sys.argv[1])))
