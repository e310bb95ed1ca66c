# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Issue 54: the lab notebook stays out of the code. A comment keeps a date only where it sources a fact (what an
archive served on a day, a document's date); run logs and measurement history (a date beside "took", "CI run",
"seconds", a figure in seconds) belong in docs/benchmarks.md, the comment keeping one sentence of why.

A comment is a `#` comment (Python, shell, YAML, Makefile) or a line of a Python docstring. A line is a dated run log
when its sentence (the line with its neighbours in the same comment block) has a date and a run-log word; sourcing words
in the same line ("read", "indexed", "served", ...) allow it.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import io
import os
import re
import sys
import tokenize

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

# Where code lives; recorded data (tests/unit/fixtures) and documentation (*.md) are not code comments.
TREES = ['roles', 'plugins', 'scripts', 'tests', 'molecule', 'playbooks', 'benchmarks', '.config']
FILES = ['Makefile']
SKIP = re.compile(r'(^|/)(fixtures|__pycache__|\.pytest_cache)(/|$)')
SUFFIXES = ('.py', '.sh', '.yml', '.yaml', '.cfg', '.j2', '.conf', '.toml', '.ini')
# Files whose every byte counts elsewhere, left as they are until their next real change: tests/images/build.sh tags
# each image with a hash of its own text, so a comment edit rebuilds every test image (and retags the :latest that
# running scenarios use). Its two dated figures are in docs/benchmarks.md already.
EXEMPT = {'tests/images/build.sh'}

DATE = re.compile(r'\b20\d\d-[01]\d-[0-3]\d\b')
# A run log: how long something took, in which run, how many seconds.
RUN_LOG = re.compile(r'\b(took|taking|CI run|run of|runs? took|passed (on|in)|measured|py-spy|samples|seconds|'
                     r'instead of|alone on|beside (two|other)|\d[\d,.]*\s?(s|ms|min|minutes)\b)', re.I)
# Dates that source a fact: what an archive or a document said on that day.
SOURCING = re.compile(r'\b(read|re-read|checked|indexed|served|answered|left|published|released|release date|archive|'
                      r'pocket|Packages|manifest|redistrib|changelog|document|dated|recorded|as of|snapshot|listed|'
                      r'BootTime|sample:)\b', re.I)


def _comment_lines(path, text):
    """(line number, comment text) of the comments of TEXT, a file at PATH."""
    if path.endswith('.py'):
        out = []
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
        except (tokenize.TokenError, SyntaxError):
            tokens = []
        previous = None
        for tok in tokens:
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.string.lstrip('#').strip()))
            elif tok.type == tokenize.STRING and previous in (None, tokenize.INDENT, tokenize.NEWLINE, tokenize.NL) \
                    and tok.string.lstrip('rbuRBU').startswith(('"""', "'''")):
                for offset, line in enumerate(tok.string.splitlines()):
                    out.append((tok.start[0] + offset, line.strip()))
            if tok.type not in (tokenize.NL, tokenize.COMMENT):
                previous = tok.type
        return out
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if stripped.startswith('#'):
            out.append((number, stripped.lstrip('#').strip()))
        elif ' # ' in line and path.endswith(('.sh', '.yml', '.yaml')) or (path.endswith('Makefile') and ' # ' in line):
            out.append((number, line.split(' # ', 1)[1].strip()))
    return out


def dated_run_logs(path, text):
    """The line numbers of TEXT whose comment is a dated run log (see the module's docstring)."""
    lines = _comment_lines(path, text)
    by_number = dict(lines)
    found = []
    for number, comment in lines:
        if not DATE.search(comment) or SOURCING.search(comment):
            continue
        sentence = ' '.join(by_number.get(n, '') for n in (number - 1, number, number + 1))
        if RUN_LOG.search(sentence):
            found.append(number)
    return found


def _code_files():
    for tree in TREES:
        for directory, _dirs, names in os.walk(os.path.join(ROOT, tree)):
            relative_dir = os.path.relpath(directory, ROOT)
            if SKIP.search(relative_dir.replace(os.sep, '/')):
                continue
            for name in names:
                relative = os.path.join(relative_dir, name)
                if (name.endswith(SUFFIXES) or name == 'Makefile') and relative.replace(os.sep, '/') not in EXEMPT:
                    yield relative
    for name in FILES:
        if os.path.exists(os.path.join(ROOT, name)):
            yield name


def test_no_code_comment_is_a_dated_run_log():
    offenders = []
    for relative in _code_files():
        with open(os.path.join(ROOT, relative), encoding='utf-8', errors='replace') as handle:
            text = handle.read()
        for number in dated_run_logs(relative, text):
            offenders.append('%s:%d: %s' % (relative, number, text.splitlines()[number - 1].strip()))
    assert offenders == [], 'move these run logs to docs/benchmarks.md, keeping one sentence of why:\n' + '\n'.join(offenders)


# The negative controls: comments as they were before issue 54, each caught; sourcing dates, each allowed.
RUN_LOGS = [
    ('scripts/scenarios.py', '# Seconds each run took in a clean-clone CI run (2 at a time on 2 cores).\n'
                             '# The runs of `make test`: the CI run of 727e069 on 2026-12-04.\nX = 1\n'),
    ('scripts/scenarios.py', '           # training_cluster: its first passing run, alone, on 2026-12-05 (beside other work).\n'
                             '           "training_cluster": 335,\n'),
    ('Makefile', '# only what is used is compiled: the demo\'s part from PyPI with an empty\n'
                 '# pip cache in 4.5 s instead of 19.7 s (2026-12-07, 2 cores).\n'),
    ('roles/hardening/tasks/integrity.yml', '# The demo\'s first database,\n# 2 CPUs: 12.7 s instead of 23.8 s with one (2026-12-07).\n'),
    ('.config/molecule/config.yml', '      # 2,652 py-spy samples of its main thread in a site@debian13 re-run, 2026-12-04), CPU\n'),
    ('scripts/mitogen/run_playbook.py', '"""Doc.\n\nevery such task pays it again: 404 of the 9,414 py-spy samples of a\n'
                                        'site@debian13 re-run (2026-12-04), about 10 s of its 162 s.\n"""\nimport os\n'),
    ('tests/images/build.sh', '# root file system in 23 s instead of\n# debootstrap\'s 51 s for Debian 12 (2026-12-07, 2 cores).\n'),
    ('x.sh', 'make demo  # took 340 s on 2026-12-07\n'),
]
SOURCED = [
    ('roles/nvidia_driver/vars/Ubuntu.yml', '# read from the archive\'s Packages indexes of <release>, -updates and -security (amd64) on 2026-12-03:\n'),
    ('plugins/module_utils/_data_cuda.py', '# 620: redistrib_620.70.06.json (release date 2026-11-04; its CUDA forward compatibility package\n'),
    ('molecule/nvidia_driver_kernels/molecule.yml', '# - jammy: branch 595: DKMS (the archive\'s 595.112.07 prebuilt modules\n'
                                                    '#   answered 404 on 2026-12-05);\n'),
    ('tests/unit/plugins/module_utils/test_fleet.py', "GENERATED = '2025-02-23T17:00:00+00:00'  # a report's time, 30 s\n"),
    ('scripts/x.py', 'WHEN = "2026-12-07"\nTIMEOUT = 30  # seconds\n'),
]


@pytest.mark.parametrize('path,text', RUN_LOGS)
def test_a_dated_run_log_is_caught(path, text):
    assert dated_run_logs(path, text), text


@pytest.mark.parametrize('path,text', SOURCED)
def test_a_date_that_sources_a_fact_is_allowed(path, text):
    assert dated_run_logs(path, text) == [], text


def test_the_old_scenarios_comments_would_fail_the_repository_check(tmp_path, monkeypatch):
    """The whole check, not only the line matcher, catches a run log put back into a file of the tree."""
    path, text = RUN_LOGS[0]
    monkeypatch.setattr(sys.modules[__name__], 'ROOT', str(tmp_path))
    (tmp_path / 'scripts').mkdir()
    (tmp_path / path).write_text(text)
    with pytest.raises(AssertionError, match=r'scripts/scenarios.py:2: # The runs of `make test`'):
        test_no_code_comment_is_a_dated_run_log()
