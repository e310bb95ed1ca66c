# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Run one external command: argv list, LC_ALL=C, a timeout, and one failure message format.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import shlex
import signal
import subprocess

# Enough stderr to see what went wrong, not so much that a task result becomes unreadable.
_MAX_STDERR_CHARS = 2000


class CommandNotFound(Exception):
    """The executable could not be started (missing, or not executable)."""

    def __init__(self, argv, error):
        self.argv = list(argv)
        self.error = error
        super(CommandNotFound, self).__init__(
            "Command %s could not be started: %s" % (format_argv(argv), error))


class CommandTimeout(Exception):
    """The command ran longer than its timeout and was killed."""

    def __init__(self, argv, timeout, stdout='', stderr=''):
        self.argv = list(argv)
        self.timeout = timeout
        self.stdout = stdout
        self.stderr = stderr
        super(CommandTimeout, self).__init__(
            "Command %s did not finish within %s seconds and was killed" % (format_argv(argv), timeout))


def format_argv(argv):
    """Render an argv list the way a user would type it into a shell."""
    return ' '.join(shlex.quote(str(a)) for a in argv)


def command_env(extra=None):
    """The environment for a child: this process's, with the C locale forced so output is parseable."""
    env = dict(os.environ)
    env['LC_ALL'] = 'C'
    env['LANG'] = 'C'
    env.pop('LANGUAGE', None)
    if extra:
        env.update(extra)
    return env


def run(argv, timeout=30, env=None):
    """Run ``argv`` (a list, never a shell string) and return ``(rc, stdout, stderr)`` as text.

    ``LC_ALL=C`` is forced. Raises CommandTimeout after ``timeout`` seconds (the child is killed),
    CommandNotFound when the executable cannot be started.
    """
    if isinstance(argv, (str, bytes)):
        raise TypeError('argv must be a list of arguments, not a string')
    argv = [str(a) for a in argv]
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=command_env(env),
            close_fds=True,
            start_new_session=True,   # so that a timeout kills the command's children too
        )
    except OSError as e:
        raise CommandNotFound(argv, e.strerror or str(e))
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        raise CommandTimeout(argv, timeout, _text(out), _text(err))
    return proc.returncode, _text(out), _text(err)


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()


def _text(data):
    if data is None:
        return ''
    return data.decode('utf-8', errors='replace')


def failure_message(argv, rc, stderr, stdout=None):
    """One message naming the command, its exit code and its stderr (stdout when stderr is empty).

    The single place where the collection formats a failed command.
    """
    detail = (stderr or '').strip() or (stdout or '').strip()
    if len(detail) > _MAX_STDERR_CHARS:
        detail = '...' + detail[-_MAX_STDERR_CHARS:]
    msg = "Command '%s' failed with exit code %s" % (format_argv(argv), rc)
    if detail:
        msg += ': ' + detail
    else:
        msg += ' and printed nothing'
    return msg
