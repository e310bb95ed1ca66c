# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""JSON text from outside (daemon.json, cloud metadata answers) looked at before json.loads reads it.

json.loads recurses once per nesting level: tens of kilobytes of brackets raise RecursionError. too_deep() finds such
a document in one linear pass, without recursion, so that the caller can refuse it with its own error first.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

# A string (to its closing quote, or to the end of an unterminated one) or a bracket: brackets inside strings do not nest.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)|[\[\]{}]', re.DOTALL)


def too_deep(text, limit):
    """The offset of the first ``[`` or ``{`` (outside strings) that opens nesting level ``limit`` + 1, else None."""
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in ('[', '{'):
            depth += 1
            if depth > limit:
                return match.start()
        elif token in (']', '}'):
            depth -= 1
    return None
