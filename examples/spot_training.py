#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""A PyTorch training loop that cooperates with the gpuops.gpu_server.spot role.

- It saves a checkpoint every --save-every steps, and at once when it gets SIGUSR1 (what the role's watcher sends
  on a spot interruption notice): the handler only sets a flag, the loop saves at the next step boundary and
  exits 0, so that the watcher's final sync finds a complete file.
- A checkpoint is written under a temporary name in the same directory (``*.tmp``, which the sync leaves out),
  flushed and fsynced, then renamed with os.replace: the directory only ever holds complete checkpoints.
- It keeps the newest --keep checkpoints and deletes the older ones.
- On start it resumes from the newest checkpoint in --checkpoint-dir that loads (the role's restore unit filled
  the directory from the bucket before this unit started); an unreadable one is reported and skipped.

The model is deliberately tiny (a linear layer learning a fixed random map); it runs on CUDA when available,
else on the CPU. The batch of step N is drawn from a generator seeded with N, so a resumed run sees the same data
as an uninterrupted one. It needs PyTorch >= 1.13 (for torch.load(..., weights_only=True); the examples/Dockerfile
image has 2.0.1). Run it as a systemd unit (examples/spot-training.service) listed in spot_training_units, or by
hand:

    python3 examples/spot_training.py --checkpoint-dir /var/lib/gpuops/checkpoints --save-every 500 --keep 3

The checkpoint file logic (naming, atomic save, pruning, resuming, the signal flag, the loop's save/stop
decisions) is plain Python and imports no torch, so that tests/unit/examples/test_spot_training.py tests it
anywhere.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import argparse
import os
import re
import signal
import sys

PREFIX = 'ckpt-'
SUFFIX = '.pt'
TMP_SUFFIX = '.tmp'
_NAME = re.compile(r'^%s(\d+)%s$' % (re.escape(PREFIX), re.escape(SUFFIX)))


def log(msg):
    print(msg, flush=True)


def checkpoint_path(directory, step):
    """Zero-padded, so that a listing sorted by name is sorted by step (for people and for rclone)."""
    return os.path.join(directory, '%s%09d%s' % (PREFIX, step, SUFFIX))


def list_checkpoints(directory):
    """[(step, path)] of the complete checkpoints in directory, oldest first; *.tmp and other names are ignored."""
    found = []
    for name in os.listdir(directory):
        match = _NAME.match(name)
        if match and os.path.isfile(os.path.join(directory, name)):
            found.append((int(match.group(1)), os.path.join(directory, name)))
    return sorted(found)


def remove_stale_tmp(directory):
    """Temporary files a killed run left behind (never complete, never synced)."""
    for name in os.listdir(directory):
        if name.startswith(PREFIX) and name.endswith(TMP_SUFFIX):
            os.unlink(os.path.join(directory, name))
            log('removed the unfinished %s' % name)


def _fsync_dir(directory):
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_save(directory, step, write):
    """write(fileobj) into <name>.tmp, flush, fsync, rename to the final name, fsync the directory. Returns the path.

    A failure removes the temporary file and leaves the existing checkpoints alone."""
    path = checkpoint_path(directory, step)
    tmp = path + TMP_SUFFIX
    try:
        with open(tmp, 'wb') as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)
    return path


def prune(directory, keep, upto):
    """Delete all but the newest keep checkpoints up to step upto; returns the deleted paths. Higher steps are left
    alone: after a resume that skipped an unreadable newest checkpoint, they are replaced as training reaches them
    (pruning by step alone would delete the fresh checkpoints and keep the broken one)."""
    found = [path for step, path in list_checkpoints(directory) if step <= upto]
    doomed = found[:-keep] if keep > 0 else []
    for path in doomed:
        os.unlink(path)
    return doomed


class NoUsableCheckpoint(Exception):
    pass


def resume(directory, load):
    """(step, state) of the newest checkpoint that load(path) reads, trying newest first; (0, None) when there is
    none. When there are checkpoints but none loads, raise NoUsableCheckpoint rather than start again from step 0
    (a broken loader or torch version would otherwise throw the job's progress away without a word)."""
    found = list_checkpoints(directory)
    for step, path in reversed(found):
        try:
            return step, load(path)
        except Exception as e:  # pylint: disable=broad-except
            log('cannot read %s, skipped: %s' % (os.path.basename(path), (str(e).strip() or repr(e)).splitlines()[0]))
    if found:
        raise NoUsableCheckpoint('none of the %d checkpoints in %s loads; refusing to start from step 0'
                                 % (len(found), directory))
    return 0, None


class StopFlag:
    """Set by the signal handler; the handler does nothing else (no I/O, no torch calls in a handler)."""

    def __init__(self):
        self.signum = None

    def __bool__(self):
        return self.signum is not None

    def handler(self, signum, _frame):
        self.signum = signum

    def install(self, signum=signal.SIGUSR1):
        """Install the handler; returns the previous one."""
        return signal.signal(signum, self.handler)


def run(step, steps, train_step, save, save_every, stop):
    """The loop from step (already on disk, or 0): train_step(step) makes step+1; save(step) every save_every
    steps and at the last one. Once stop is set, the loop ends at the next step boundary and saves that step unless
    it is on disk already (the signal came during a save, or before the first step). Returns (step, stopped)."""
    saved = step
    while step < steps and not stop:
        train_step(step)
        step += 1
        if step % save_every == 0 or step == steps:
            save(step)
            saved = step
    if stop and saved != step:
        save(step)
    return step, bool(stop)


def train(args):
    # First of all: SIGUSR1's default action kills the process, and importing torch or resuming takes a while.
    stop = StopFlag()
    stop.install(signal.SIGUSR1)
    import torch  # pylint: disable=import-error

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    features = 32
    target = torch.randn(features, 1, generator=torch.Generator().manual_seed(0)).to(device)
    model = torch.nn.Linear(features, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

    os.makedirs(args.checkpoint_dir, exist_ok=True)
    remove_stale_tmp(args.checkpoint_dir)
    step, state = resume(args.checkpoint_dir, lambda p: torch.load(p, map_location=device, weights_only=True))
    if state is None:
        log('starting from step 0 on %s' % device)
    else:
        model.load_state_dict(state['model'])
        optimizer.load_state_dict(state['optimizer'])
        log('resumed from step %d on %s' % (step, device))

    def train_step(current):
        gen = torch.Generator().manual_seed(current)
        x = torch.randn(args.batch_size, features, generator=gen).to(device)
        y = x @ target
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if (current + 1) % args.log_every == 0:
            log('step %d loss %.6f' % (current + 1, loss.item()))

    def save(current):
        state = {'step': current, 'model': model.state_dict(), 'optimizer': optimizer.state_dict()}
        path = atomic_save(args.checkpoint_dir, current, lambda f: torch.save(state, f))
        log('saved %s%s' % (os.path.basename(path), ' on SIGUSR1' if stop else ''))
        for old in prune(args.checkpoint_dir, args.keep, current):
            log('deleted %s' % os.path.basename(old))

    step, stopped = run(step, args.steps, train_step, save, args.save_every, stop)
    log('stopping at step %d on SIGUSR1' % step if stopped else 'finished at step %d' % step)
    return 0


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument('--checkpoint-dir', required=True, help='where checkpoints go (the spot role syncs it)')
    p.add_argument('--save-every', type=int, default=500, help='save every N steps (default 500)')
    p.add_argument('--keep', type=int, default=3, help='keep the newest K checkpoints (default 3; 0 keeps all)')
    p.add_argument('--steps', type=int, default=100000, help='train until this step (default 100000)')
    p.add_argument('--batch-size', type=int, default=256)
    p.add_argument('--lr', type=float, default=0.05)
    p.add_argument('--log-every', type=int, default=100, help='print the loss every N steps')
    args = p.parse_args(argv)
    if args.save_every < 1 or args.keep < 0 or args.steps < 0 or args.log_every < 1:
        p.error('--save-every and --log-every must be >= 1, --keep and --steps >= 0')
    return args


def main(argv=None):
    try:
        return train(parse_args(argv))
    except NoUsableCheckpoint as e:
        log(str(e))
        return 1


if __name__ == '__main__':
    sys.exit(main())
