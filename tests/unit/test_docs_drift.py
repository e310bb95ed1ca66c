# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The hand-written documentation against the code: it fails when one moves without the other.

- docs/architecture.md names every file of plugins/module_utils/.
- docs/collection-variables.md has a row for every collection-wide variable, that is every ``gpuops_*`` variable
  that a role or site.yml reads (found in the Jinja2 expressions of roles/ and playbooks/site.yml, never from a
  list kept here), and that row names each role variable whose default reads it; a row names no variable that
  nothing reads.
- No README (README.md, roles/*/README.md, docs/*.md) names a role variable (prefixed with a role's name, in inline
  code or as a key in a YAML example) that neither the role's argument specs nor its defaults define.

- Every relative link of those documents (README.md, roles/*/README.md, docs/*.md) reaches a file of the repository,
  and its #anchor a heading of that file; every page of docs/ that README.md links is among the documents checked.
- README.md is the user's front door: at most 250 lines, and its first 60 say how to install the collection, run
  its site playbook (with --check first) and try it here (make demo, make test), with at most 5 lines of timings.

Each checker is a plain function of the document's text and what the code defines, fed a doc with a name missing in
the negative controls below.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import functools
import glob
import os
import re

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _read(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return f.read()


class _Loader(getattr(yaml, 'CSafeLoader', yaml.SafeLoader)):  # pylint: disable=too-many-ancestors
    """YAML as Ansible writes it: tags such as !unsafe or !vault are read as the plain value they tag."""


_Loader.add_multi_constructor('!', lambda loader, suffix, node: loader.construct_scalar(node)
                              if isinstance(node, yaml.ScalarNode) else None)


@functools.lru_cache(maxsize=None)
def _load(path):
    with open(path) as f:
        return yaml.load(f, Loader=_Loader)  # noqa: S506 (a SafeLoader subclass)


# ---------------------------------------------------------------------------------------------------------------
# docs/architecture.md and plugins/module_utils/

def module_utils_files(root=ROOT):
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(root, 'plugins', 'module_utils', '*.py'))
                  if not os.path.basename(p).startswith('__'))


def missing_module_utils(doc, files):
    """The files that ``doc`` does not name in inline code (``_fleet.py``)."""
    return [name for name in files if '`%s`' % name not in doc]


# ---------------------------------------------------------------------------------------------------------------
# gpuops_* variables and docs/collection-variables.md

# Jinja2 expressions: {{ }} and {% %}, and the [[ ]] / [% %] delimiters of templates that hold Prometheus' own {{ }}.
_JINJA_RE = re.compile(r'\{\{(.*?)\}\}|\{%(.*?)%\}|\[\[(.*?)\]\]|\[%(.*?)%\]', re.S)
_LITERAL_RE = re.compile(r"'[^']*'|\"[^\"]*\"")
# A variable, not an attribute (x.gpuops_y) or part of a longer word.
_GPUOPS_RE = re.compile(r'(?<![\w.$])gpuops_[a-z0-9_]*[a-z0-9]\b')
# Keys whose values Ansible reads as bare expressions, without {{ }}.
_EXPRESSION_KEYS = frozenset(('when', 'that', 'failed_when', 'changed_when', 'until'))


def _names_in_expression(text):
    return set(_GPUOPS_RE.findall(_LITERAL_RE.sub("''", text)))


def gpuops_names_read(text, bare=False):
    """The gpuops_* variables that the Jinja2 in ``text`` reads (all of ``text`` is an expression when ``bare``)."""
    names = set()
    for groups in _JINJA_RE.findall(text):
        names |= _names_in_expression(''.join(groups))
    if bare:
        names |= _names_in_expression(_JINJA_RE.sub('', text))
    return names


def _strings(node, key=None):
    """``(key, text)`` of every string in a YAML document, with the key (or list's key) it sits under."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v, key)
    elif isinstance(node, str):
        yield key, node


def variables_read_in(path):
    """The gpuops_* variables a YAML file or a template reads."""
    if path.endswith('.j2'):
        with open(path) as f:
            return gpuops_names_read(f.read())
    names = set()
    for key, text in _strings(_load(path)):
        names |= gpuops_names_read(text, bare=key in _EXPRESSION_KEYS)
    return names


def _role_files(root):
    return sorted(glob.glob(os.path.join(root, 'roles', '*', '*', '**', '*.yml'), recursive=True)
                  + glob.glob(os.path.join(root, 'roles', '*', '*', '**', '*.j2'), recursive=True))


def collection_wide_variables(root=ROOT):
    """The gpuops_* variables that a role or site.yml reads."""
    names = set()
    for path in _role_files(root) + [os.path.join(root, 'playbooks', 'site.yml')]:
        names |= variables_read_in(path)
    return names


def variables_read_anywhere(root=ROOT):
    names = collection_wide_variables(root)
    for path in glob.glob(os.path.join(root, 'playbooks', '*.yml')):
        names |= variables_read_in(path)
    return names


def _role_defaults(role_dir):
    """``{variable: default}`` from a role's defaults/main.yml and the options of all its argument specs."""
    defaults = {}
    path = os.path.join(role_dir, 'defaults', 'main.yml')
    if os.path.isfile(path):
        defaults.update(_load(path) or {})
    path = os.path.join(role_dir, 'meta', 'argument_specs.yml')
    if os.path.isfile(path):
        for entry in ((_load(path) or {}).get('argument_specs') or {}).values():
            for name, option in ((entry or {}).get('options') or {}).items():
                defaults.setdefault(name, (option or {}).get('default'))
    return defaults


def gpuops_feeds(root=ROOT):
    """``{gpuops variable: {role variables whose default reads it}}``."""
    feeds = {}
    for role_dir in sorted(glob.glob(os.path.join(root, 'roles', '*', ''))):
        for name, default in _role_defaults(role_dir).items():
            for _key, text in _strings(default):
                for gpuops in gpuops_names_read(text):
                    feeds.setdefault(gpuops, set()).add(name)
    return feeds


_ROW_RE = re.compile(r'^\|([^|]*)\|(.*)$', re.M)


def documented_rows(doc):
    """``{gpuops variable: its table row}`` for each variable named in the first cell of a table row."""
    rows = {}
    for first, rest in _ROW_RE.findall(doc):
        for name in re.findall(r'`(gpuops_\w+)`', first):
            rows[name] = first + '|' + rest
    return rows


def missing_collection_variables(doc, names):
    rows = documented_rows(doc)
    return sorted(name for name in names if name not in rows)


def missing_feeds(doc, feeds):
    """``(gpuops variable, role variable)`` where the variable's row does not name a role variable it feeds."""
    rows = documented_rows(doc)
    return sorted((gpuops, name) for gpuops, names in feeds.items() if gpuops in rows
                  for name in names if '`%s`' % name not in rows[gpuops])


def unknown_collection_variables(doc, read):
    """Rows for variables that nothing reads (renamed or removed)."""
    return sorted(name for name in documented_rows(doc) if name not in read)


# ---------------------------------------------------------------------------------------------------------------
# Role variables named in READMEs

def role_names(root=ROOT):
    return sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(root, 'roles', '*', '')))


# A host variable a role reads per host, by subscript: hostvars[host]['gpu_monitoring_scrape_address'].
_HOST_VARIABLE_RE = re.compile(r"\w\[\s*'([a-z]\w*)'\s*\]")


def defined_role_variables(root=ROOT):
    """``{role: variables}``: its argument specs and defaults, and the host variables with its prefix that the roles'
    files read per host (gpu_monitoring_server reads the gpu_monitoring entry's gpu_monitoring_scrape_address)."""
    host_variables = set()
    for path in glob.glob(os.path.join(root, 'roles', '*', '*', '**', '*.j2'), recursive=True) + \
            glob.glob(os.path.join(root, 'roles', '*', '*', '**', '*.yml'), recursive=True):
        with open(path) as f:
            host_variables |= set(_HOST_VARIABLE_RE.findall(f.read()))
    defined = {}
    for role in role_names(root):
        names = set(_role_defaults(os.path.join(root, 'roles', role)))
        defined[role] = names | set(n for n in host_variables if n.startswith(role + '_'))
    return defined


def _values_of(node, wanted):
    """Every string (or string in a list) under the key ``wanted`` anywhere in a YAML document."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == wanted:
                yield from (item for item in (v if isinstance(v, list) else [v]) if isinstance(item, str))
            else:
                yield from _values_of(v, wanted)
    elif isinstance(node, list):
        for v in node:
            yield from _values_of(v, wanted)


def _set_fact_names(node):
    """The names every ansible.builtin.set_fact under ``node`` (a YAML document) sets."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == 'ansible.builtin.set_fact' and isinstance(v, dict):
                yield from v
            else:
                yield from _set_fact_names(v)
    elif isinstance(node, list):
        for v in node:
            yield from _set_fact_names(v)


def _module_fields(path):
    """The option and return value names a module documents."""
    names = set()
    with open(path) as f:
        text = f.read()
    for var in ('DOCUMENTATION', 'RETURN'):
        m = re.search(r'^%s = r?(\'\'\'|""")(.*?)\1' % var, text, re.M | re.S)
        doc = yaml.safe_load(m.group(2)) if m else None
        if isinstance(doc, dict):
            names |= set(doc.get('options') or {}) if var == 'DOCUMENTATION' else set(doc)
    return names


def other_names(root=ROOT):
    """Role-prefixed names that are no role variables: plugins with their options and return values, roles,
    playbooks, Molecule scenarios, tags, inventory groups, and the public facts a role sets (its results, such as
    upgrade_driver_outcome: set_fact names without a leading underscore)."""
    names = set(role_names(root))
    for pattern in ('plugins/modules/*.py', 'plugins/filter/*.yml', 'plugins/test/*.yml', 'playbooks/*.yml',
                    'molecule/*/'):
        names |= set(os.path.basename(p.rstrip('/')).rsplit('.', 1)[0] for p in glob.glob(os.path.join(root, pattern)))
    for path in glob.glob(os.path.join(root, 'plugins', 'modules', '*.py')):
        names |= _module_fields(path)
    for path in _role_files(root) + glob.glob(os.path.join(root, 'playbooks', '*.yml')):
        if path.endswith('.yml'):
            names |= set(_values_of(_load(path), 'tags'))
            names |= set(k for k in _set_fact_names(_load(path)) if not k.startswith('_'))
    for path in glob.glob(os.path.join(root, 'playbooks', '*.yml')):
        for play in _load(path) or []:
            if isinstance(play, dict) and isinstance(play.get('hosts'), str):
                names |= set(re.findall(r"default\('([\w-]+)'\)", play['hosts']))
    return names


_CODE_SPAN_RE = re.compile(r'(?<!`)`([^`\n]+)`(?!`)')
_FENCE_RE = re.compile(r'^```[^\n]*\n(.*?)^```', re.M | re.S)
_IDENT_RE = re.compile(r'([a-z][a-z0-9_]*[a-z0-9])(?:\Z|[=:\s|\[])')
_YAML_KEY_RE = re.compile(r'^\s*(?:-\s+)?([a-z][a-z0-9_]*[a-z0-9]):(?:\s|$)', re.M)


def names_in_markdown(doc):
    """Identifiers a Markdown text names: the start of each inline code span, and the keys of its code blocks."""
    names = set()
    for block in _FENCE_RE.findall(doc):
        names |= set(_YAML_KEY_RE.findall(block))
    for span in _CODE_SPAN_RE.findall(_FENCE_RE.sub('', doc)):
        m = _IDENT_RE.match(span.strip())
        if m:
            names.add(m.group(1))
    return names


def undefined_role_variables(doc, defined, ignore=()):
    """Role-prefixed names in ``doc`` that no role of a matching prefix defines (gpu_monitoring_node_group is the
    gpu_monitoring entry's, though gpu_monitoring_node is the longer prefix)."""
    found = []
    for name in sorted(names_in_markdown(doc)):
        roles = [r for r in defined if name.startswith(r + '_')]
        if roles and not any(name in defined[r] for r in roles) and name not in ignore:
            found.append(name)
    return found


def readmes(root=ROOT):
    return sorted([os.path.join(root, 'README.md')] + glob.glob(os.path.join(root, 'roles', '*', 'README.md'))
                  + glob.glob(os.path.join(root, 'docs', '*.md')))


# ---------------------------------------------------------------------------------------------------------------
# Links between the documents

# [text](target): the target up to a space or the closing parenthesis; images too.
_LINK_RE = re.compile(r'\]\(([^()\s]+)(?:\s+"[^"]*")?\)')
_HEADING_RE = re.compile(r'^#{1,6}\s+(.+?)\s*#*\s*$', re.M)


def heading_anchors(doc):
    """The anchors GitHub gives the headings of a Markdown text: lower case, punctuation but - and _ dropped,
    spaces as -, a repeated heading suffixed -1, -2."""
    anchors, seen = set(), {}
    for heading in _HEADING_RE.findall(_FENCE_RE.sub('', doc)):
        slug = re.sub(r'[^\w\- ]', '', heading.strip().lower().replace('`', '')).replace(' ', '-')
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else '%s-%d' % (slug, n))
    return anchors


def relative_links(doc):
    """The relative link targets of a Markdown text (no URL scheme, no mail), outside code blocks and spans."""
    text = _CODE_SPAN_RE.sub('', _FENCE_RE.sub('', doc))
    return [t for t in _LINK_RE.findall(text) if not re.match(r'[a-z][a-z0-9+.-]*:', t)]


def broken_links(doc, path, root=ROOT, read=None):
    """``(target, why)`` for each relative link of ``doc`` (the file ``path``) that reaches no file of ``root``, or no
    heading of it."""
    read = read or (lambda p: open(p).read())
    found = []
    for target in relative_links(doc):
        name, _sep, anchor = target.partition('#')
        dest = os.path.normpath(os.path.join(os.path.dirname(path), name)) if name else path
        if not os.path.realpath(dest).startswith(os.path.realpath(root) + os.sep) or not os.path.exists(dest):
            found.append((target, 'no such file'))
        elif anchor and (os.path.isdir(dest) or not dest.endswith('.md')
                         or anchor not in heading_anchors(read(dest))):
            found.append((target, 'no such heading'))
    return found


def linked_pages(doc, path, root=ROOT):
    """The files under docs/ that ``doc`` (the file ``path``) links to."""
    pages = set()
    for target in relative_links(doc):
        dest = os.path.normpath(os.path.join(os.path.dirname(path), target.partition('#')[0]))
        if os.path.dirname(dest) == os.path.join(root, 'docs'):
            pages.add(dest)
    return pages


# ---------------------------------------------------------------------------------------------------------------
# README.md as the front door

README_MAX_LINES = 250
FRONT_LINES = 60
# What a new user must find on the first screen: install, run (checked first), try here.
FRONT_DOOR = (
    ('install from Galaxy', re.compile(r'ansible-galaxy collection install gpuops\.gpu_server\b')),
    ('install the built tarball', re.compile(r'ansible-galaxy collection install build/gpuops-gpu_server-[0-9.]+\.tar\.gz')),
    ('requirements.yml', re.compile(r'requirements\.yml')),
    ('a tarball entry of requirements.yml', re.compile(r'type: file')),
    ('a minimal inventory', re.compile(r'^\s*gpu_servers:', re.M)),
    ('the playbook in check mode', re.compile(r'ansible-playbook gpuops\.gpu_server\.site -i \S+ --check')),
    ('the playbook', re.compile(r'^ansible-playbook gpuops\.gpu_server\.site -i \S+\s*$', re.M)),
    ('make demo', re.compile(r'^make demo\b', re.M)),
    ('make test', re.compile(r'^make test\b', re.M)),
)
# A line that gives a duration (340 s, 52 min, 1,246 s) is a line of timings.
_TIMING_RE = re.compile(r'\b[0-9][0-9,.]*(?:-[0-9][0-9,.]*)?\s*(?:s|min|seconds|minutes)\b')


def front_door_problems(readme):
    """What README.md's text lacks or has too much of, as a user's front door."""
    lines = readme.split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    front = '\n'.join(lines[:FRONT_LINES])
    problems = ['%d lines, more than %d' % (len(lines), README_MAX_LINES)] if len(lines) > README_MAX_LINES else []
    problems += ['no %s in the first %d lines' % (what, FRONT_LINES) for what, rx in FRONT_DOOR if not rx.search(front)]
    timings = [line for line in lines[:FRONT_LINES] if _TIMING_RE.search(line)]
    if len(timings) > 5:
        problems.append('%d lines of timings in the first %d lines, more than 5' % (len(timings), FRONT_LINES))
    return problems


# ---------------------------------------------------------------------------------------------------------------
# The documentation as it is

def test_architecture_names_every_module_utils_file():
    files = module_utils_files()
    assert '_compat.py' in files and len(files) > 10
    assert missing_module_utils(_read('docs', 'architecture.md'), files) == []


def test_every_collection_wide_variable_has_its_row():
    names = collection_wide_variables()
    # What the set is made of: roles' defaults (gpuops_cuda_version), set_fact hand-overs read by another role
    # (gpuops_firewall_ports) and site.yml's plays (gpuops_skip_roles); metric names are no variables.
    assert {'gpuops_cuda_version', 'gpuops_firewall_ports', 'gpuops_skip_roles', 'gpuops_gpu_hosts'} <= names
    assert not any(n.startswith(('gpuops_gpu_xid', 'gpuops_spot_last', 'gpuops_backup_last')) for n in names)
    assert missing_collection_variables(_read('docs', 'collection-variables.md'), names) == []


def test_each_row_names_the_role_variables_it_feeds():
    feeds = gpuops_feeds()
    assert 'nvidia_driver_cuda_version' in feeds['gpuops_cuda_version']
    assert missing_feeds(_read('docs', 'collection-variables.md'), feeds) == []


def test_no_row_for_a_variable_that_nothing_reads():
    assert unknown_collection_variables(_read('docs', 'collection-variables.md'), variables_read_anywhere()) == []


def test_no_readme_names_an_undefined_role_variable():
    defined, ignore = defined_role_variables(), other_names()
    assert 'hardening_firewall_service_ports' in defined['hardening'] and 'docker_daemon_config' in ignore
    found = {}
    for path in readmes():
        with open(path) as f:
            missing = undefined_role_variables(f.read(), defined, ignore)
        if missing:
            found[os.path.relpath(path, ROOT)] = missing
    assert found == {}


# ---------------------------------------------------------------------------------------------------------------
# Negative controls: each checker reports the name a doc leaves out or gets wrong

def test_a_module_utils_file_left_out_is_reported():
    doc = 'files: `_command.py`, `_pci.py`; also _fleet.py in plain text'
    assert missing_module_utils(doc, ['_command.py', '_fleet.py', '_pci.py']) == ['_fleet.py']


def test_the_variables_read_are_found_in_expressions_only():
    assert gpuops_names_read("{{ gpuops_cuda_version | default('11.8') }} and gpuops_text outside") == \
        {'gpuops_cuda_version'}
    assert gpuops_names_read("'jupyter' not in gpuops_skip_roles | default([])", bare=True) == {'gpuops_skip_roles'}
    assert gpuops_names_read("{{ 'gpuops_literal' ~ x.gpuops_attr }} [[ gpuops_bracketed ]]") == {'gpuops_bracketed'}
    assert gpuops_names_read('expr: rate(gpuops_gpu_xid_events_total[5m]) > 0') == set()


def test_a_collection_variable_without_a_row_is_reported():
    doc = ('| Variable | Feeds |\n| --- | --- |\n| `gpuops_cuda_version` | `cuda_toolkit_version` |\n'
           'prose naming `gpuops_skip_roles` outside the table\n')
    assert missing_collection_variables(doc, {'gpuops_cuda_version', 'gpuops_skip_roles'}) == ['gpuops_skip_roles']
    feeds = {'gpuops_cuda_version': {'cuda_toolkit_version', 'jupyter_torch_cuda_version'}}
    assert missing_feeds(doc, feeds) == [('gpuops_cuda_version', 'jupyter_torch_cuda_version')]
    assert unknown_collection_variables(doc, {'gpuops_skip_roles'}) == ['gpuops_cuda_version']


def test_an_undefined_role_variable_is_reported():
    defined = {'hardening': {'hardening_firewall_service_ports'}, 'jupyter': {'jupyter_port'},
               'nvidia_driver': {'nvidia_driver_branch'}, 'nvidia_container_toolkit': set()}
    doc = ('Set `hardening_firewall_ports` or `hardening_firewall_service_ports: [...]`, `jupyter_port=8888`;\n'
           'the module `nvidia_container_toolkit_probe` is no variable; `gpuops_cuda_version` is no role variable.\n'
           '```yaml\nnvidia_driver_branch: "570"\nnvidia_driver_brnach: "570"\n```\n')
    assert undefined_role_variables(doc, defined, ignore={'nvidia_container_toolkit_probe'}) == [
        'hardening_firewall_ports', 'nvidia_driver_brnach']


def test_every_relative_link_reaches_a_file_and_heading():
    found = {}
    for path in readmes():
        with open(path) as f:
            broken = broken_links(f.read(), path)
        if broken:
            found[os.path.relpath(path, ROOT)] = broken
    assert found == {}


def test_the_docs_pages_the_readme_links_are_checked():
    path = os.path.join(ROOT, 'README.md')
    pages = linked_pages(_read('README.md'), path)
    names = set(os.path.basename(p) for p in pages)
    assert {'benchmarks.md', 'security.md', 'clusters.md', 'platforms.md', 'testing.md', 'usage.md'} <= names
    assert pages <= set(readmes())
    assert not os.path.exists(os.path.join(ROOT, 'docs', 'ci-times.md'))  # folded into docs/benchmarks.md


def test_the_readme_is_a_front_door():
    assert front_door_problems(_read('README.md')) == []


def test_a_broken_link_is_reported(tmp_path):
    (tmp_path / 'docs').mkdir()
    (tmp_path / 'docs' / 'page.md').write_text('# A page\n\n## Two words\n\n## `code` here\n\n## Two words\n')
    readme = str(tmp_path / 'README.md')
    doc = ('# Read me\n[ok](#read-me) [ok](docs/page.md) [ok](docs/page.md#two-words) [ok](docs/page.md#code-here) [ok](docs/page.md#two-words-1) '
           '[gone](docs/ci-times.md) [anchor](docs/page.md#three-words) [self](#nothing) [out](../../etc/passwd) '
           '[web](https://example.invalid/x.md) `[code](docs/no.md)`\n```\n[fenced](docs/no.md)\n```\n')
    (tmp_path / 'README.md').write_text(doc)
    assert broken_links(doc, readme, root=str(tmp_path)) == [
        ('docs/ci-times.md', 'no such file'), ('docs/page.md#three-words', 'no such heading'),
        ('#nothing', 'no such heading'), ('../../etc/passwd', 'no such file')]
    pages = {str(tmp_path / 'docs' / 'ci-times.md'), str(tmp_path / 'docs' / 'page.md')}
    assert linked_pages(doc, readme, root=str(tmp_path)) == pages


def test_the_old_readme_is_no_front_door():
    """Negative control: README.md as it was before issue 53 (580 lines, 50 lines of timings before what the
    collection is), and the current one with its install lines or playbook run cut out or timings added."""
    old = ('# gpuops.gpu_server\n\n```bash\nmake demo   # build\nmake test   # everything\n```\n\n'
           + '`make demo` on 2026-12-07 took **340 s** at 03:48 and 347 s at 03:56.\n' * 30 + 'text\n' * 543)
    problems = front_door_problems(old)
    assert '580 lines, more than 250' in problems
    assert 'no install from Galaxy in the first 60 lines' in problems
    assert 'no the playbook in check mode in the first 60 lines' in problems
    assert '30 lines of timings in the first 60 lines, more than 5' in problems
    current = _read('README.md')
    cut = current.replace('ansible-galaxy collection install gpuops.gpu_server\n', '')
    assert front_door_problems(cut) == ['no install from Galaxy in the first 60 lines']
    lines = current.split('\n')
    prose = [i for i, line in enumerate(lines[:FRONT_LINES]) if line[:1].isalpha() and 'ansible-galaxy' not in line
             and 'requirements.yml' not in line and not _TIMING_RE.search(line)][:6]
    for i in prose:  # six lines of prose become timings, nothing else moves
        lines[i] = 'It took 12 s.'
    assert [p for p in front_door_problems('\n'.join(lines)) if 'timings' in p] == [
        '%d lines of timings in the first 60 lines, more than 5'
        % (6 + sum(1 for line in current.split('\n')[:FRONT_LINES] if _TIMING_RE.search(line)))]
    pushed = current.replace('# gpuops.gpu_server\n', '# gpuops.gpu_server\n' + '\n' * 60, 1)
    assert 'no make demo in the first 60 lines' in front_door_problems(pushed)
