# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Waiting for a condition in the Molecule verifiers (molecule/<scenario>/tests put this directory on sys.path).

A busy CI machine (two scenarios side by side on 2 cores) makes any fixed sleep a race: the tests poll for what they
need instead, with a generous limit, and fail naming what they waited for.
"""
import time


def wait_for(predicate, timeout, what, step=1):
    """Call predicate() every step seconds until it returns something truthy, and return that; AssertionError naming
    WHAT after timeout seconds."""
    deadline = time.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.time() >= deadline:
            raise AssertionError("timed out after %d s waiting for %s" % (timeout, what))
        time.sleep(step)
