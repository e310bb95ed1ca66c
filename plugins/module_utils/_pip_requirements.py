# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The lines of a pip requirements file: pinned releases (name to version) and extra lines, parsed once.

Used by the pip_requirements filter (plugins/filter/pip_requirements.py), whose text the jupyter role writes to the
requirements file that pip installs JupyterLab's virtual environment from. Each pin becomes one ``name==version``
line and each extra line one line: a line break inside a value would add a requirement or a pip option that nobody
wrote, so it is refused, as is a version that YAML read as a number (``4.10`` is the float 4.1). Standard library only;
never a traceback for bad input, only RequirementsError naming the variable, the entry and the fix.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

# A project name (PEP 508, "Names"): ASCII letters and digits, with ., _ and - inside.
_NAME = re.compile(r'[A-Za-z0-9](?:[A-Za-z0-9._-]{0,198}[A-Za-z0-9])?\Z')
# A release as ``==`` pins it: a PEP 440 version of ASCII letters, digits, dots, and the separators it allows (epoch !,
# local +, pre/post/dev with - or _), starting with a digit (or v); no space, operator, marker or wildcard.
_VERSION = re.compile(r'[vV]?[0-9][A-Za-z0-9.!+_-]{0,99}\Z')
# Anything that starts a new line for pip or for Python's str.splitlines (the file is read line by line).
_LINE_BREAK = re.compile('[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]')
# The longest extra line accepted (a requirement with a URL and a hash fits).
MAX_LINE = 1000


class RequirementsError(ValueError):
    """A pin or a line that cannot be written; the message names the variable, the entry and the fix."""


def _canonical(name):
    """The name as pip compares names (PEP 503): runs of -, _ and . are one -, case ignored."""
    return re.sub(r'[-_.]+', '-', name).lower()


def _pin(name, version, pins_var):
    if not isinstance(name, str) or not _NAME.match(name):
        raise RequirementsError(
            '%s: %r is not a package name (ASCII letters and digits, with . _ - inside; no space, line break, version '
            'or extra): give the name as PyPI spells it, for example jupyterlab.' % (pins_var, name))
    if isinstance(version, bool) or not isinstance(version, str):
        raise RequirementsError(
            '%s[%s]: the version %r is a %s, not a string: quote it (%s: "4.10"), since YAML reads an unquoted 4.10 '
            'as the number 4.1.' % (pins_var, name, version, type(version).__name__, name))
    if not _VERSION.match(version):
        raise RequirementsError(
            '%s[%s]: %r is not a release to pin with == (a version such as 4.6.6 or 2.0.0rc1: ASCII digits, letters '
            'and dots, no space, line break, operator, marker or wildcard): give the exact release, or put a '
            'range in the list of extra lines.' % (pins_var, name, version))
    return '%s==%s' % (name, version)


def _line(index, line, extra_var):
    if not isinstance(line, str):
        raise RequirementsError(
            '%s[%d]: %r is a %s, not a requirement line: give it as a string, for example "numpy==2.3.4".'
            % (extra_var, index, line, type(line).__name__))
    if _LINE_BREAK.search(line):
        raise RequirementsError(
            '%s[%d]: %r holds a line break: give each requirement or pip option as its own entry of the list.'
            % (extra_var, index, line))
    if not line.strip():
        raise RequirementsError('%s[%d]: the line is empty: remove the entry.' % (extra_var, index))
    if len(line) > MAX_LINE:
        raise RequirementsError('%s[%d]: the line is %d characters long, more than %d: is it a requirement?'
                                % (extra_var, index, len(line), MAX_LINE))
    return line


def render(pins, extra=None, pins_var='pins', extra_var='extra'):
    """The requirements text, one line each, ending in a line break (empty with nothing to write): first
    ``name==version`` for each pin in PINS (a dict, its order kept), then each line of EXTRA (a list of strings).

    PINS_VAR and EXTRA_VAR name the variables in the messages. Raises RequirementsError."""
    if not isinstance(pins, dict):
        raise RequirementsError('%s: %r is a %s, not a mapping of package name to version, for example '
                                '{jupyterlab: "4.6.6"}.' % (pins_var, pins, type(pins).__name__))
    if extra is None:
        extra = []
    if not isinstance(extra, (list, tuple)):
        raise RequirementsError('%s: %r is a %s, not a list of requirement lines, for example ["numpy==2.3.4"].'
                                % (extra_var, extra, type(extra).__name__))
    lines = []
    seen = {}
    for name, version in pins.items():
        lines.append(_pin(name, version, pins_var))
        canonical = _canonical(name)
        if canonical in seen:
            raise RequirementsError('%s: %s and %s are the same package for pip (%s): keep one of them.'
                                    % (pins_var, seen[canonical], name, canonical))
        seen[canonical] = name
    lines.extend(_line(index, line, extra_var) for index, line in enumerate(extra))
    return ''.join(line + '\n' for line in lines)
