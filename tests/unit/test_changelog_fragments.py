# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The changelog fragments are what `antsibull-changelog release` (make release-notes) can write a release from.

antsibull-changelog's own fragment linter (the one `antsibull-changelog lint` runs, with changelogs/config.yaml)
finds no error in changelogs/fragments, and the fragments hold one release summary at most: the release's notes
open with it. A fragment that breaks the release (YAML that does not parse, an unknown section, a dict where an
entry's text belongs) is found here instead of when the release is made.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import shutil
import subprocess
import sys

import pytest

changelog_cli = pytest.importorskip('antsibull_changelog.cli')
from antsibull_changelog.config import ChangelogConfig, CollectionDetails, PathsConfig  # noqa: E402
from antsibull_changelog.fragment import ChangelogFragmentLinter, load_fragments  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fragment_problems(root):
    """``[(fragment file, message)]`` from antsibull-changelog's linter, as `antsibull-changelog lint` reports them,
    plus a second release summary."""
    paths = PathsConfig.force_collection(root)
    config = ChangelogConfig.load(paths, CollectionDetails(paths))
    exceptions = []
    fragments = load_fragments(paths, config, None, exceptions)
    problems = [(os.path.basename(path), 'yaml parsing error') for path, _ex in exceptions]
    linter = ChangelogFragmentLinter(config)
    for fragment in fragments:
        problems += [(os.path.basename(path), message) for path, _line, _col, message in linter.lint(fragment)]
    summaries = sorted(f.name for f in fragments if config.prelude_name in f.content)
    if len(summaries) > 1:
        problems.append((', '.join(summaries), 'more than one %s' % config.prelude_name))
    return sorted(problems)


def test_the_fragments_make_a_release():
    """The fragments waiting for the next release (none right after one) lint clean."""
    assert fragment_problems(ROOT) == []


def _version_tuple(version):
    return tuple(int(part) for part in str(version).split('.'))


def test_galaxy_version_is_released_or_next_in_the_changelog():
    """galaxy.yml's version was released from the fragments (`make release-notes`), or it is the version in development,
    above every release: changelogs/changelog.yaml holds the latest release with its summary and changes, and
    CHANGELOG.rst was written from it."""
    import yaml
    with open(os.path.join(ROOT, 'galaxy.yml')) as f:
        version = yaml.safe_load(f)['version']
    with open(os.path.join(ROOT, 'changelogs', 'changelog.yaml')) as f:
        releases = yaml.safe_load(f)['releases']
    latest = max(releases, key=_version_tuple)
    assert version in releases or _version_tuple(version) > _version_tuple(latest)
    changes = releases[latest]['changes']
    assert changes.get('release_summary')
    assert sum(len(v) for k, v in changes.items() if k != 'release_summary') > 100
    with open(os.path.join(ROOT, 'CHANGELOG.rst')) as f:
        text = f.read()
    assert '\nv%s\n' % latest in text
    lint = subprocess.run([sys.executable, '-m', 'antsibull_changelog', 'lint-changelog-yaml',
                           os.path.join(ROOT, 'changelogs', 'changelog.yaml')], capture_output=True, text=True,
                          check=False)
    assert (lint.returncode, lint.stdout, lint.stderr) == (0, '', '')


def test_a_fragment_that_breaks_the_release_is_reported(tmp_path):
    """Negative control: a copy of the configuration with fragments that `antsibull-changelog release` refuses."""
    (tmp_path / 'changelogs' / 'fragments').mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, 'galaxy.yml'), str(tmp_path))
    shutil.copy(os.path.join(ROOT, 'changelogs', 'config.yaml'), str(tmp_path / 'changelogs'))
    fragments = {
        'good.yml': '---\nbugfixes:\n  - hardening - a plain entry.\n',
        # ": " inside a plain entry makes it a mapping.
        'colon.yml': '---\nbugfixes:\n  - hardening - made by make demo alone: it installs.\n',
        'section.yml': '---\nbugfix:\n  - hardening - a section antsibull-changelog does not know.\n',
        'yaml.yml': '---\nbugfixes:\n  - [unclosed\n',
        'summary1.yml': '---\nrelease_summary: One.\n',
        'summary2.yml': '---\nrelease_summary: Two.\n',
    }
    for name, text in fragments.items():
        (tmp_path / 'changelogs' / 'fragments' / name).write_text(text)
    problems = fragment_problems(str(tmp_path))
    assert sorted(set(name for name, _message in problems)) == [
        'colon.yml', 'section.yml', 'summary1.yml, summary2.yml', 'yaml.yml']
    assert ('section.yml', 'invalid section: bugfix') in problems
    assert ('yaml.yml', 'yaml parsing error') in problems
