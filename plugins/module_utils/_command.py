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
import selectors
import shlex
import signal
import subprocess
import time

# Enough stderr to see what went wrong, not so much that a task result becomes unreadable.
_MAX_STDERR_CHARS = 2000
# No command this collection runs prints this much (a boot's kernel log is a few MB); more is hostile or broken.
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
_CHUNK = 65536
# After SIGKILL, how long to wait for the command itself to be reaped.
_REAP_SECONDS = 5


class CommandError(Exception):
    """The command could not give an answer: not started, too slow or too talkative."""


class CommandNotFound(CommandError):
    """The executable could not be started (missing, or not executable)."""

    def __init__(self, argv, error):
        self.argv = list(argv)
        self.error = error
        super(CommandNotFound, self).__init__(
            "Command %s could not be started: %s" % (format_argv(argv), error))


class CommandTimeout(CommandError):
    """The command ran longer than its timeout and was killed."""

    def __init__(self, argv, timeout, stdout='', stderr=''):
        self.argv = list(argv)
        self.timeout = timeout
        self.stdout = stdout
        self.stderr = stderr
        super(CommandTimeout, self).__init__(
            "Command %s did not finish within %s seconds and was killed" % (format_argv(argv), timeout))


class CommandOutputTooLarge(CommandError):
    """The command printed more than the byte cap and was killed."""

    def __init__(self, argv, max_bytes):
        self.argv = list(argv)
        self.max_bytes = max_bytes
        super(CommandOutputTooLarge, self).__init__(
            "Command %s printed more than %d bytes and was killed" % (format_argv(argv), max_bytes))


def format_argv(argv):
    """Render an argv list the way a user would type it into a shell."""
    return ' '.join(shlex.quote(str(a)) for a in argv)


def command_env(extra=None, inherit=True):
    """The environment for a child: this process's (none of it with ``inherit`` false) with the C locale forced so
    output is parseable, then ``extra`` over it."""
    env = dict(os.environ) if inherit else {}
    env['LC_ALL'] = 'C'
    env['LANG'] = 'C'
    env.pop('LANGUAGE', None)
    if extra:
        env.update(extra)
    return env


def run(argv, timeout=30, env=None, max_bytes=MAX_OUTPUT_BYTES, stdin=None, inherit_env=True):
    """Run ``argv`` (a list, never a shell string) and return ``(rc, stdout, stderr)`` as text.

    ``LC_ALL=C`` is forced. ``timeout`` is a hard limit on the whole call: the command runs in its own
    process group, its pipes are read against one deadline (never waiting for an end-of-file that a
    child which escaped the group with ``setsid`` may hold back), and at the deadline the group is
    killed and CommandTimeout raised. More than ``max_bytes`` of stdout plus stderr kills it as well and
    raises CommandOutputTooLarge. CommandNotFound when the executable cannot be started.

    ``env`` updates this process's environment for the command; with ``inherit_env`` false it is all of it, with
    the C locale where it sets none. ``stdin`` (text or bytes) is written to the command's standard input, which is
    then closed (a secret travels this way, never in argv); None gives it /dev/null.
    """
    if isinstance(argv, (str, bytes)):
        raise TypeError('argv must be a list of arguments, not a string')
    argv = [str(a) for a in argv]
    if timeout is None or timeout <= 0:
        raise ValueError('timeout must be a positive number of seconds, got %r' % (timeout,))
    if stdin is not None and not isinstance(stdin, bytes):
        stdin = str(stdin).encode('utf-8')
    deadline = time.monotonic() + timeout
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=command_env(env, inherit=inherit_env),
            close_fds=True,
            start_new_session=True,   # so that a timeout kills the command's children too
        )
    except OSError as e:
        raise CommandNotFound(argv, e.strerror or str(e))
    try:
        out, err, state = _collect(proc, deadline, max_bytes, stdin)
        if state == 'eof':
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                state = 'timeout'
    except BaseException:
        _stop(proc)
        raise
    if state != 'eof':
        _stop(proc)
        if state == 'too_large':
            raise CommandOutputTooLarge(argv, max_bytes)
        raise CommandTimeout(argv, timeout, _text(out), _text(err))
    _close(proc)
    return proc.returncode, _text(out), _text(err)


def _collect(proc, deadline, max_bytes, data=None):
    """Write ``data`` to stdin (then close it), read stdout and stderr until both end, the deadline passes or
    ``max_bytes`` are exceeded.

    Returns ``(stdout bytes, stderr bytes, state)``, state ``eof``, ``timeout`` or ``too_large``.
    """
    chunks = {proc.stdout.fileno(): [], proc.stderr.fileno(): []}
    total = 0
    with selectors.DefaultSelector() as sel:
        for pipe in (proc.stdout, proc.stderr):
            os.set_blocking(pipe.fileno(), False)
            sel.register(pipe.fileno(), selectors.EVENT_READ)
        pending = memoryview(data or b'')
        stdin_fd = None if proc.stdin is None else proc.stdin.fileno()
        if stdin_fd is not None:
            os.set_blocking(stdin_fd, False)
            sel.register(stdin_fd, selectors.EVENT_WRITE)
        state = 'eof'
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                state = 'timeout'
                break
            for key, _mask in sel.select(remaining):
                if key.fd == stdin_fd:
                    pending = _feed(proc, sel, pending)
                    continue
                try:
                    data = os.read(key.fd, _CHUNK)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(key.fd)
                    continue
                chunks[key.fd].append(data)
                total += len(data)
            if total > max_bytes:
                state = 'too_large'
                break
    return b''.join(chunks[proc.stdout.fileno()]), b''.join(chunks[proc.stderr.fileno()]), state


def _feed(proc, sel, pending):
    """Write what the pipe takes of ``pending`` to the command's stdin; close it when all is written or the command
    closed its end. Returns what is left to write."""
    fd = proc.stdin.fileno()
    try:
        written = os.write(fd, pending[:_CHUNK]) if pending else 0
    except BlockingIOError:
        return pending
    except OSError:   # BrokenPipeError: the command does not read its input (any more)
        written = len(pending)
    pending = pending[written:]
    if not pending:
        sel.unregister(fd)
        proc.stdin.close()
    return pending


def _stop(proc):
    """Kill the command's process group, reap the command (bounded), close the pipes without reading on."""
    _kill_group(proc)
    try:
        proc.wait(timeout=_REAP_SECONDS)
    except subprocess.TimeoutExpired:
        pass
    _close(proc)


def _close(proc):
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        try:
            proc.kill()
        except OSError:
            pass


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
