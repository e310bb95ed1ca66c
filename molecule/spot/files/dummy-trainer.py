# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Stand-in trainer of the spot Molecule scenario: standard library only, writes nothing outside --dir but stdout.

Resumes from the newest ckpt-<step>.bin in DIR that verifies (header line "step=<n> sha256=<hex of payload>", then
the payload; *.tmp ignored, a bad file logged and skipped). Every --interval it writes the next step slowly, in
flushed chunks, as ckpt-<step>.bin.tmp (a sync meanwhile sees it half-written), fsyncs, renames it and keeps the
newest --keep. SIGUSR1: abandon a write in progress, save the next step at once, exit 0. SIGTERM: exit 0 unsaved.
"""

import argparse
import hashlib
import os
import re
import signal
import sys
import time

NAME = re.compile(r'^ckpt-(\d+)\.bin$')
HEADER = re.compile(br'^step=(\d+) sha256=([0-9a-f]{64})\n$')
CHUNKS = 4
received = []


def say(msg):
    print(msg, flush=True)


def payload(step, size):
    """size deterministic pseudo-random bytes derived from step."""
    out, i = bytearray(), 0
    while len(out) < size:
        out += hashlib.sha256(b'%d/%d' % (step, i)).digest()
        i += 1
    return bytes(out[:size])


def checkpoints(directory):
    found = [(int(m.group(1)), os.path.join(directory, n)) for n in os.listdir(directory) for m in [NAME.match(n)] if m]
    return sorted(found)


def verify(step, path):
    try:
        with open(path, 'rb') as f:
            header, data = f.readline(), f.read()
    except OSError as e:
        return str(e)
    m = HEADER.match(header)
    if not m or int(m.group(1)) != step:
        return 'bad header %r' % header[:40]
    if hashlib.sha256(data).hexdigest() != m.group(2).decode():
        return 'sha256 mismatch (%d payload bytes)' % len(data)
    return None


def nap(seconds):
    """Sleep, but return within 0.1 s of a signal."""
    end = time.monotonic() + seconds
    while not received and time.monotonic() < end:
        time.sleep(min(0.1, max(end - time.monotonic(), 0)))


def save(args, step, slow):
    """Write checkpoint step; slow: in chunks with pauses, abandoned (False, no .tmp left) when a signal comes."""
    path, complete = os.path.join(args.dir, 'ckpt-%d.bin' % step), False
    data = payload(step, args.size_kib * 1024)
    size = -(-len(data) // CHUNKS)
    with open(path + '.tmp', 'wb') as f:
        f.write(b'step=%d sha256=%s\n' % (step, hashlib.sha256(data).hexdigest().encode()))
        for start in range(0, len(data), size):
            if slow and start:
                nap(args.interval / (2 * CHUNKS))
                if received:
                    break
            f.write(data[start:start + size])
            f.flush()
        else:
            os.fsync(f.fileno())
            complete = True
    if not complete:
        os.unlink(path + '.tmp')
        say('abandoned the half-written %s.tmp' % os.path.basename(path))
        return False
    os.replace(path + '.tmp', path)
    fd = os.open(args.dir, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    # Keep the newest K up to this step; a higher (unverifiable, skipped) one is replaced when training gets there.
    for _step, old in [c for c in checkpoints(args.dir) if c[0] <= step][:-args.keep]:
        os.unlink(old)
    return True


def main():
    p = argparse.ArgumentParser(description='stand-in trainer of the spot Molecule scenario')
    for flag, kind in (('--dir', str), ('--interval', float), ('--size-kib', int), ('--keep', int)):
        p.add_argument(flag, type=kind, required=True)
    args = p.parse_args()
    if args.keep < 1 or args.size_kib < 1 or args.interval <= 0:
        p.error('--keep and --size-kib must be >= 1, --interval > 0')
    for signum in (signal.SIGUSR1, signal.SIGTERM):
        signal.signal(signum, lambda signum, _frame: received.append(signum))

    step = 0
    for candidate, path in reversed(checkpoints(args.dir)):
        problem = verify(candidate, path)
        if problem is None:
            step = candidate
            break
        say('skipping %s: %s' % (os.path.basename(path), problem))
    say('resumed from step %d' % step if step else 'starting from step 0')

    while True:
        if not received:
            nap(args.interval)
        if signal.SIGTERM in received:
            say('SIGTERM: exiting without saving')
            return 0
        if received:
            save(args, step + 1, slow=False)
            say('saved step %d on SIGUSR1' % (step + 1))
            return 0
        if save(args, step + 1, slow=True):
            step += 1
            say('saved step %d' % step)


if __name__ == '__main__':
    sys.exit(main())
