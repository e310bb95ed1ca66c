# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one poller of the tests: Molecule verifiers, the browser checks (tests/support/jupyterlab.py) and unit tests.

A busy CI machine (two scenarios side by side on 2 cores) makes any fixed sleep a race: the tests poll for what they
need instead, with a generous limit, and fail naming what they waited for.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import time


def wait_for(predicate, timeout, what, step=1, ignore=()):
    """Call predicate() every STEP seconds until it returns something truthy, and return that.

    After TIMEOUT seconds, AssertionError naming WHAT: a string, or a function that returns one, called then (to say
    where things stood at the end). An exception of a type in IGNORE counts as "not yet" (a page that re-renders
    between two calls on one of its elements); the last one is named in the timeout's message."""
    deadline = time.monotonic() + timeout
    while True:
        ignored = None
        try:
            value = predicate()
        except ignore as e:
            value, ignored = None, e
        if value:
            return value
        if time.monotonic() >= deadline:
            message = "timed out after %g s waiting for %s" % (timeout, what() if callable(what) else what)
            if ignored is not None:
                message += " (the last poll raised %s: %s)" % (type(ignored).__name__, ignored)
            raise AssertionError(message)
        time.sleep(step)
