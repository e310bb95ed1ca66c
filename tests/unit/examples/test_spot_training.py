# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""examples/spot_training.py: the checkpoint file logic (names, atomic save, pruning, resuming), the SIGUSR1 flag
and the loop's save/stop decisions, without torch; then, where torch is installed, a real train, resume and
SIGUSR1 stop on the CPU (or CUDA)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import signal
import threading

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import load_script

SCRIPT = os.path.join(ROOT, 'examples', 'spot_training.py')


@pytest.fixture(scope='module')
def st():
    return load_script('spot_training_example', 'examples', 'spot_training.py')


@pytest.fixture
def sigusr1():
    """Put SIGUSR1's handler back after the test (the example installs its own)."""
    previous = signal.getsignal(signal.SIGUSR1)
    yield
    signal.signal(signal.SIGUSR1, previous)


def write(path, data=b'x'):
    with open(str(path), 'wb') as f:
        f.write(data)


def names(directory):
    return sorted(os.listdir(str(directory)))


def test_the_example_imports_no_torch(st):
    assert 'torch' not in vars(st)


def test_list_checkpoints_sorts_by_step_and_ignores_tmp_and_others(st, tmp_path):
    assert os.path.basename(st.checkpoint_path(str(tmp_path), 7)) == 'ckpt-000000007.pt'
    for name in ('ckpt-9.pt', 'ckpt-10.pt', 'ckpt-000000003.pt', 'ckpt-000000011.pt.tmp', 'ckpt-x.pt', 'notes.txt',
                 'ckpt-12.pt.partial'):
        write(tmp_path / name)
    (tmp_path / 'ckpt-13.pt').mkdir()
    assert [(s, os.path.basename(p)) for s, p in st.list_checkpoints(str(tmp_path))] == [
        (3, 'ckpt-000000003.pt'), (9, 'ckpt-9.pt'), (10, 'ckpt-10.pt')]


def test_atomic_save_writes_the_final_name_only(st, tmp_path):
    path = st.atomic_save(str(tmp_path), 5, lambda f: f.write(b'state 5'))
    assert path == st.checkpoint_path(str(tmp_path), 5)
    assert names(tmp_path) == ['ckpt-000000005.pt']
    assert (tmp_path / 'ckpt-000000005.pt').read_bytes() == b'state 5'


def test_atomic_save_fsyncs_the_file_before_the_rename_and_the_directory_after(st, tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append(('fsync', os.path.basename(os.readlink('/proc/self/fd/%d' % fd))))
        real_fsync(fd)

    def replace(src, dst):
        events.append(('replace', os.path.basename(src), os.path.basename(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(st.os, 'fsync', fsync)
    monkeypatch.setattr(st.os, 'replace', replace)
    st.atomic_save(str(tmp_path), 1, lambda f: f.write(b'x'))
    assert events == [('fsync', 'ckpt-000000001.pt.tmp'), ('replace', 'ckpt-000000001.pt.tmp', 'ckpt-000000001.pt'),
                      ('fsync', tmp_path.name)]


def test_a_failed_save_leaves_no_tmp_and_the_old_checkpoints_alone(st, tmp_path):
    st.atomic_save(str(tmp_path), 10, lambda f: f.write(b'good'))

    def broken(f):
        f.write(b'half a checkpoint')
        raise IOError('disk full')

    with pytest.raises(IOError):
        st.atomic_save(str(tmp_path), 20, broken)
    assert names(tmp_path) == ['ckpt-000000010.pt']
    assert (tmp_path / 'ckpt-000000010.pt').read_bytes() == b'good'


def test_prune_keeps_the_newest(st, tmp_path):
    for step in (1, 2, 3, 10, 20):
        write(st.checkpoint_path(str(tmp_path), step))
    write(tmp_path / 'ckpt-000000001.pt.tmp')
    assert st.prune(str(tmp_path), 0, 20) == []
    deleted = st.prune(str(tmp_path), 2, 20)
    assert [os.path.basename(p) for p in deleted] == ['ckpt-000000001.pt', 'ckpt-000000002.pt', 'ckpt-000000003.pt']
    assert names(tmp_path) == ['ckpt-000000001.pt.tmp', 'ckpt-000000010.pt', 'ckpt-000000020.pt']


def test_prune_after_resuming_past_a_broken_newest_keeps_the_fresh_checkpoints(st, tmp_path):
    # ckpt 30 did not load, the run resumed from 10 and saved 11 and 12: the fresh 11 and 12 are kept, the old 10
    # goes, and 30 stays until the run saves step 30 over it.
    for step in (10, 11, 12, 30):
        write(st.checkpoint_path(str(tmp_path), step))
    assert [os.path.basename(p) for p in st.prune(str(tmp_path), 2, 12)] == ['ckpt-000000010.pt']
    assert names(tmp_path) == ['ckpt-000000011.pt', 'ckpt-000000012.pt', 'ckpt-000000030.pt']


def test_resume_from_an_empty_directory_starts_at_0(st, tmp_path):
    write(tmp_path / 'ckpt-000000050.pt.tmp')
    assert st.resume(str(tmp_path), lambda p: pytest.fail('nothing to load')) == (0, None)


def test_resume_takes_the_newest_that_loads(st, tmp_path, capsys):
    for step, data in ((10, b'ten'), (20, b'twenty'), (30, b'truncat')):
        write(st.checkpoint_path(str(tmp_path), step), data)
    write(tmp_path / 'ckpt-000000040.pt.tmp', b'forty')

    def load(path):
        with open(path, 'rb') as f:
            data = f.read()
        if data == b'truncat':
            raise EOFError('Ran out of input')
        return data

    assert st.resume(str(tmp_path), load) == (20, b'twenty')
    assert 'cannot read ckpt-000000030.pt, skipped: Ran out of input' in capsys.readouterr().out


def test_resume_refuses_when_no_checkpoint_loads(st, tmp_path):
    write(st.checkpoint_path(str(tmp_path), 10))

    def load(path):
        raise RuntimeError('wrong torch')

    with pytest.raises(st.NoUsableCheckpoint, match='none of the 1 checkpoints'):
        st.resume(str(tmp_path), load)


def test_remove_stale_tmp_only_removes_our_tmp_files(st, tmp_path):
    for name in ('ckpt-000000005.pt.tmp', 'ckpt-000000004.pt', 'other.tmp'):
        write(tmp_path / name)
    st.remove_stale_tmp(str(tmp_path))
    assert names(tmp_path) == ['ckpt-000000004.pt', 'other.tmp']


def test_the_signal_handler_only_sets_the_flag(st, sigusr1):
    stop = st.StopFlag()
    assert not stop
    stop.install(signal.SIGUSR1)
    os.kill(os.getpid(), signal.SIGUSR1)
    assert stop and stop.signum == signal.SIGUSR1


class Recorder:
    def __init__(self, signal_at_step=None, signal_at_save=None):
        self.trained, self.saved = [], []
        self.signal_at_step, self.signal_at_save = signal_at_step, signal_at_save

    def train_step(self, step):
        self.trained.append(step)
        if step == self.signal_at_step:
            os.kill(os.getpid(), signal.SIGUSR1)

    def save(self, step):
        self.saved.append(step)
        if step == self.signal_at_save:
            os.kill(os.getpid(), signal.SIGUSR1)


def test_run_saves_every_n_steps_and_at_the_end(st):
    rec = Recorder()
    assert st.run(0, 10, rec.train_step, rec.save, 4, st.StopFlag()) == (10, False)
    assert rec.trained == list(range(10))
    assert rec.saved == [4, 8, 10]


def test_run_resumed_past_the_end_does_nothing(st):
    rec = Recorder()
    assert st.run(12, 10, rec.train_step, rec.save, 4, st.StopFlag()) == (12, False)
    assert rec.trained == [] and rec.saved == []


def test_sigusr1_saves_at_the_next_step_boundary_and_stops(st, sigusr1):
    stop = st.StopFlag()
    stop.install(signal.SIGUSR1)
    rec = Recorder(signal_at_step=5)  # arrives while step 5 -> 6 trains
    assert st.run(0, 100, rec.train_step, rec.save, 4, stop) == (6, True)
    assert rec.trained == [0, 1, 2, 3, 4, 5]
    assert rec.saved == [4, 6]


def test_sigusr1_during_a_save_does_not_save_twice(st, sigusr1):
    stop = st.StopFlag()
    stop.install(signal.SIGUSR1)
    rec = Recorder(signal_at_save=8)
    assert st.run(2, 100, rec.train_step, rec.save, 4, stop) == (8, True)
    assert rec.saved == [4, 8]


def test_sigusr1_before_the_first_step_saves_nothing(st):
    stop = st.StopFlag()
    stop.signum = signal.SIGUSR1  # came while torch was imported or the checkpoint loaded
    rec = Recorder()
    assert st.run(40, 100, rec.train_step, rec.save, 4, stop) == (40, True)
    assert rec.trained == [] and rec.saved == []


@pytest.mark.parametrize('argv', [['--save-every', '0'], ['--keep', '-1'], []])
def test_bad_arguments_are_refused(st, argv):
    with pytest.raises(SystemExit):
        st.parse_args((['--checkpoint-dir', '/tmp/x'] if argv else []) + argv)


def test_torch_trains_resumes_and_stops_on_sigusr1(st, tmp_path, capsys, sigusr1):
    torch = pytest.importorskip('torch')
    d = str(tmp_path)
    common = ['--checkpoint-dir', d, '--keep', '2', '--batch-size', '8', '--log-every', '1000']
    assert st.main(common + ['--steps', '30', '--save-every', '10']) == 0
    assert names(tmp_path) == ['ckpt-000000020.pt', 'ckpt-000000030.pt']
    assert 'starting from step 0' in capsys.readouterr().out

    assert st.main(common + ['--steps', '45', '--save-every', '10']) == 0
    assert 'resumed from step 30' in capsys.readouterr().out
    assert names(tmp_path) == ['ckpt-000000040.pt', 'ckpt-000000045.pt']
    state = torch.load(os.path.join(d, 'ckpt-000000045.pt'), weights_only=True)
    assert state['step'] == 45 and set(state) == {'step', 'model', 'optimizer'}

    # A long run, stopped by SIGUSR1 from another thread: it saves the step it reached and returns 0.
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGUSR1))
    timer.start()
    try:
        assert st.main(common + ['--steps', '10000000', '--save-every', '1000000']) == 0
    finally:
        timer.cancel()
    out = capsys.readouterr().out
    assert 'on SIGUSR1' in out
    last = st.list_checkpoints(d)[-1][0]
    assert 'stopping at step %d on SIGUSR1' % last in out
    assert not [n for n in names(tmp_path) if n.endswith('.tmp')]
