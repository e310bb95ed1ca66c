#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: config_files
short_description: Put several small configuration files and directories in place in one module run
version_added: 1.0.0
description:
  - Writes each entry of O(files) as M(ansible.builtin.copy) with C(content) would, creates directories as
    M(ansible.builtin.file) with C(state=directory) would, and removes files as C(state=absent) would, all in one
    run of the module on the host instead of one or two per file.
  - "Why it exists: when nothing changes, M(ansible.builtin.copy) and M(ansible.builtin.template) run two modules on
    the host (a C(stat) with checksum, then C(file)), each paying the interpreter's start. A role that writes a dozen
    files pays for two dozen module starts on every idempotent run; with this module it pays for one. The checks are
    the same: the content is compared byte for byte and owner, group and mode are enforced on every run."
  - Entries are handled in order, so a directory listed before its files exists when they are written.
  - "A file's new content is first checked with the entry's C(validate) command, on a copy in a private temporary
    directory (what the check leaves there goes with it). It then goes to a temporary file in the same directory,
    which gets the wanted owner, group and mode before anything else can read it, and is renamed over the old file.
    A file whose content is unchanged is not rewritten; its owner, group and mode are
    corrected where they differ."
  - "Every entry's own values (path, mode, lines, settings, validate) are checked before anything is changed, in check
    mode as in a real run: a bad value fails the task with nothing changed. Then an owner or group the host does not
    know fails the entry before anything of it is changed."
  - The first entry that fails stops the run and fails the task with a message naming the path; entries before it
    stay as they were put, as with one task per file. RV(changed_paths) lists them.
  - Templates are rendered on the control node by the task, with the M(ansible.builtin.template) lookup, and passed
    as C(content).
author:
  - gpuops maintainers (@gpuops)
options:
  files:
    description:
      - The files and directories, in the order they are handled.
    type: list
    elements: dict
    required: true
    suboptions:
      path:
        description:
          - The file or directory on the host. An absolute path.
          - A path holding a line break (any character that Python's C(str.splitlines()) ends a line at) is refused.
          - Only a directory (O(files[].state=directory)) may be named with a trailing C(/); a file's path ending in
            C(/) (O(files[].state=file), V(lines) or V(absent)) is refused, where it used to be written as nothing, or
            (V(absent)) reported unchanged with the file left in place.
        type: path
        required: true
      state:
        description:
          - V(file) writes O(files[].content).
          - V(lines) edits the existing file line by line as M(ansible.builtin.lineinfile) does for each item of
            O(files[].lines) and O(files[].settings).
          - V(directory) creates the directory and any missing parent, each with the entry's owner, group and mode, as
            M(ansible.builtin.file) does.
          - V(absent) removes a file or a symbolic link. A directory there fails the task; nothing is removed
            recursively.
        type: str
        choices: [file, lines, directory, absent]
        default: file
      content:
        description:
          - The whole text of the file. Required when O(files[].state=file).
          - Written as UTF-8, exactly as given (a lookup's trailing newline is kept or lost by the lookup).
        type: str
      lines:
        description:
          - For O(files[].state=lines), the lines to put in place, in order. For each, the last line that
            O(files[].lines[].regexp) matches is replaced by O(files[].lines[].line); when none matches and the exact
            line is not there either, the line is added at the end of the file, as M(ansible.builtin.lineinfile)
            does with O(ansible.builtin.lineinfile#module:regexp) and no C(insertafter).
          - The file must exist; the rest of it is kept as it is.
        type: list
        elements: dict
        suboptions:
          regexp:
            description:
              - A Python regular expression searched in each line (without its line ending).
            type: str
            required: true
          line:
            description:
              - The whole line. A line break in it (any character that C(str.splitlines()) ends a line at) is refused;
                it would be written as two lines and appended again on every run.
            type: str
            required: true
      links:
        description:
          - For O(files[].state=directory), symbolic links to put in the directory, name to target, as
            M(ansible.builtin.file) with C(state=link) and C(force=true) would. A link to another target or a file in
            its place is replaced; a directory in its place fails the task. The target need not exist yet.
          - A name is one entry of the directory (no C(/), not V(.) or V(..)); a name or target holding a line break
            is refused.
        type: dict
      settings:
        description:
          - For O(files[].state=lines), C(key value) settings to put in place after O(files[].lines), each as the line
            O(files[].setting_line) with the regular expression O(files[].setting_regexp), in which C({key}) is the
            key (escaped in the regexp) and C({value}) the value.
          - A value is a string or a number. A boolean is refused, as are null, a list and a dict, naming the key;
            written as it was it would be C(True) or C(False), which few files read (C(login.defs) wants C(yes) or
            C(no)); give the word the file expects, quoted.
          - A key or a value holding a line break is refused, as is a blank key.
        type: dict
      setting_line:
        description:
          - How a line of O(files[].settings) is written. A line break in it is refused.
        type: str
        default: '{key} = {value}'
      setting_regexp:
        description:
          - The regular expression that finds a setting's line, commented out or not.
        type: str
        default: '^\s*#?\s*{key}\s*='
      owner:
        description:
          - The owner, a name or a number. Left as it is when not given (root for a new file run as root).
        type: str
      group:
        description:
          - The group, a name or a number. Left as it is when not given.
        type: str
      mode:
        description:
          - The permissions, as an octal string such as V('0644') or V('644'), a number (YAML's unquoted C(0644)), or a
            symbolic mode as M(ansible.builtin.file) accepts (V(u+x), V(go-w), V(u=rw,go=r)).
          - A symbolic mode is resolved as M(ansible.builtin.copy) and M(ansible.builtin.file) resolve it, against the
            mode of the file being replaced, or for a new file against the mode copy gives one (0666 less the umask).
            So V(u+x) on a 0644 file gives 0744 and V(a+x) on a new file 0755 under umask 022; the next run changes
            nothing.
          - Refused before anything changes, naming the path, are a string that is neither octal nor symbolic, a
            blank one or one holding white space, a number outside 0 to 07777, a boolean and any other type.
          - When not given, an existing file or directory keeps its mode, and a new one gets the default of the
            host's umask.
        type: raw
      enabled:
        description:
          - V(false) leaves the entry out, as a task's C(when) would. Nothing is checked or changed for it.
        type: bool
        default: true
      validate:
        description:
          - A command that checks the new content before it replaces O(files[].path); C(%s) is the temporary file's
            path. It runs only when the content changes, and not in check mode.
          - It must hold C(%s). It runs without a shell, as an argument vector; the command line is split into words
            as a shell would split it (quotes, backslashes), then each C(%s) is replaced by the file's path, inside
            a word where it is part of one (C(--config=%s)); C(~) and C($VARIABLES) are expanded in each word as
            before. The path is never split, so a file name with a quote, a space, C(%) or C(;) is checked as any
            other. C(%%) is a percent sign; any other C(%) is kept as it is (C(date +%Y)).
          - A command without C(%s) or with unbalanced quotes is refused before anything changes.
        type: str
attributes:
  check_mode:
    support: full
    description:
      - In check mode nothing is written, created or removed; RV(changed_paths) and the diff say what would.
      - Check mode fails where the real run would for everything the entries themselves decide (the checks of their
        values, a file or directory in the way, an unknown owner or group of a file that exists). It cannot know what
        an earlier task of the play, not run in check mode, would make (a missing directory, owner or group of a new
        file); and, as with M(ansible.builtin.copy), the O(files[].validate) command does not run.
  diff_mode:
    support: full
    description: The diff shows each changed file's text before and after, and each changed owner, group or mode.
  platform:
    support: full
    platforms: posix
    description: Runs wherever Python can write the files; the roles use it on Linux hosts.
notes:
  - Use one task for the files that notify the same handlers; the task reports a change when any entry changed.
    Read RV(changed_paths) where a later task depends on one file.
  - Unlike M(ansible.builtin.copy), the module does not hide O(files[].content). A task that writes a secret (a key, a
    token, a password hash) needs C(no_log) itself, which also keeps the secret out of the diff.
  - Not for large or binary files, whose content would travel in the module's arguments; use
    M(ansible.builtin.copy) for those.
seealso:
  - module: ansible.builtin.copy
  - module: ansible.builtin.template
  - module: ansible.builtin.file
'''

EXAMPLES = r'''
- name: Write the exporter's configuration and its systemd drop-in
  gpuops.gpu_server.config_files:
    files:
      - path: /etc/systemd/system/node_exporter.service.d
        state: directory
        mode: "0755"
      - path: /etc/systemd/system/node_exporter.service.d/gpuops.conf
        content: "{{ lookup('ansible.builtin.template', 'node-exporter-sandbox.conf.j2') }}"
        mode: "0644"
      - path: /etc/prometheus/rules.yml
        content: "{{ lookup('ansible.builtin.template', 'rules.yml.j2') }}"
        owner: root
        group: prometheus
        mode: "0640"
        validate: promtool check rules %s
      - path: /etc/prometheus/old.yml
        state: absent
  register: exporter_files
  notify: Restart node_exporter

- name: Reload Prometheus only when its rules changed
  ansible.builtin.systemd_service:
    name: prometheus
    state: reloaded
  when: "'/etc/prometheus/rules.yml' in exporter_files.changed_paths"
'''

RETURN = r'''
paths:
  description: The paths of every entry handled (those with O(files[].enabled=true)), changed or not, in order.
  returned: success
  type: list
  elements: str
  sample: ["/etc/systemd/system/node_exporter.service.d", "/etc/systemd/system/node_exporter.service.d/gpuops.conf"]
changed_paths:
  description: The paths that were (in check mode, would be) created, changed or removed, in the order of O(files).
  returned: always
  type: list
  elements: str
  sample: ["/etc/systemd/system/node_exporter.service.d/gpuops.conf"]
'''

import grp
import os
import pwd
import re
import shlex
import shutil
import stat
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native, to_text

# What is read of an existing file to compare it; a configuration file larger than this is not one we write.
MAX_FILE_BYTES = 4 * 1024 * 1024

ENTRY_SPEC = dict(
    path=dict(type='path', required=True),
    state=dict(type='str', choices=['file', 'lines', 'directory', 'absent'], default='file'),
    content=dict(type='str', no_log=False),
    lines=dict(type='list', elements='dict', options=dict(regexp=dict(type='str', required=True),
                                                          line=dict(type='str', required=True))),
    links=dict(type='dict'),
    settings=dict(type='dict'),
    setting_line=dict(type='str', default='{key} = {value}'),
    setting_regexp=dict(type='str', default=r'^\s*#?\s*{key}\s*='),
    owner=dict(type='str'),
    group=dict(type='str'),
    mode=dict(type='raw'),
    validate=dict(type='str'),
    enabled=dict(type='bool', default=True),
)


class EntryError(Exception):
    pass


# What str.splitlines() ends a line at: a line, a setting or a path holding one of these would be written as two lines
# (or read as two by a Python reader), and lineinfile-style matching would append it again on every run.
LINE_BREAKS = u'\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029'

# validate: '%s' is the file checked, '%%' a percent sign; any other '%' is kept as it is.
PLACEHOLDER = re.compile(r'%%|%s')


def line_break_in(text):
    """The first line break in text, as repr shows it, or None."""
    for char in to_text(text, errors='surrogate_or_replace'):
        if char in LINE_BREAKS:
            return repr(char)
    return None


def check_mode_syntax(path, mode):
    """Refuse a mode that is neither an octal number nor a symbolic mode, before anything changes."""
    if mode is None:
        return
    if isinstance(mode, bool) or not isinstance(mode, (int, str)):
        raise EntryError('%s: mode must be an octal string such as "0644" or a symbolic mode such as "u=rw,go=r", '
                         'got %r (%s)' % (path, mode, type(mode).__name__))
    if isinstance(mode, str) and (not mode.strip() or re.search(r'\s', mode)):
        raise EntryError('%s: mode %r is blank or holds white space; leave mode out to keep the mode the file has'
                         % (path, mode))
    value = parse_mode(path, mode, os.stat_result((stat.S_IFREG | 0o644,) + (0,) * 9))
    if not 0 <= value <= 0o7777:
        raise EntryError('%s: mode %r is out of range (0 to 07777)' % (path, mode))


def parse_mode(path, mode, base):
    """The mode as a number: an int as it is, an octal string, or a symbolic mode applied to the stat base, as
    AnsibleModule.set_mode_if_different applies it to the file it changes."""
    if isinstance(mode, int):
        return mode
    try:
        return int(mode, 8)
    except ValueError:
        pass
    try:
        value = AnsibleModule._symbolic_mode_to_octal(base, mode)
    except Exception as e:
        raise EntryError('%s: mode %r is neither octal nor symbolic (%s)' % (path, mode, to_native(e)))
    return value


def resolve_mode(path, mode, old_stat):
    """The octal mode a file written now must get: a symbolic mode resolved against the file it replaces, or for a new
    file against the mode copy gives one (0666 less the umask), as ansible.builtin.copy and file resolve it."""
    if mode is None or isinstance(mode, int):
        return mode
    if old_stat is None:
        umask = os.umask(0)
        os.umask(umask)
        old_stat = os.stat_result((stat.S_IFREG | (0o666 & ~umask),) + (0,) * 9)
    return parse_mode(path, mode, old_stat)


def validate_argv(path, command):
    """The validate command as an argument vector (shlex, as run_command splits a string), refused without '%s'."""
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise EntryError('%s: validate %r is not a command line: %s' % (path, command, to_native(e)))
    if not argv or not any('%s' in PLACEHOLDER.findall(arg) for arg in argv):
        raise EntryError('%s: validate must contain %%s (the new file), got %r' % (path, command))
    return argv


def check_entry(entry):
    """Refuse what the entry's own values make impossible, before anything changes (in check mode too): line breaks,
    a file's path ending in '/', a bad mode, a setting that is no text, a validate command without %s."""
    path = entry['path']
    if line_break_in(path):
        raise EntryError('%r: the path holds a line break (%s); nothing was changed' % (path, line_break_in(path)))
    if not os.path.isabs(path):
        raise EntryError('%s: the path must be absolute' % path)
    if entry['state'] != 'directory' and path.endswith('/'):
        raise EntryError('%s: the path ends with "/", which names a directory, but state=%s handles a file; drop the '
                         'trailing "/" (or use state=directory)' % (path, entry['state']))
    check_mode_syntax(path, entry['mode'])
    for i, item in enumerate(entry['lines'] or []):
        if line_break_in(item['line']):
            raise EntryError('%s: lines[%d].line %r holds a line break (%s); give each line as its own item'
                             % (path, i, item['line'], line_break_in(item['line'])))
    if line_break_in(entry['setting_line']):
        raise EntryError('%s: setting_line %r holds a line break (%s)' % (
            path, entry['setting_line'], line_break_in(entry['setting_line'])))
    for key, value in (entry['settings'] or {}).items():
        if not to_text(key).strip():
            raise EntryError('%s: settings has a blank key (%r)' % (path, key))
        if isinstance(value, bool):
            raise EntryError('%s: settings[%r] is the boolean %s, which would be written as %r; write the word the '
                             'file expects, quoted ("yes"/"no", "true"/"false")' % (path, key, value, to_text(value)))
        if value is None or not isinstance(value, (str, int, float)):
            raise EntryError('%s: settings[%r] must be a string or a number, got %r (%s)'
                             % (path, key, value, type(value).__name__))
        for what, text in (('key', key), ('value', value)):
            if line_break_in(text):
                raise EntryError('%s: the %s of settings[%r] holds a line break (%s); a setting is one line'
                                 % (path, what, key, line_break_in(text)))
    for name, target in (entry['links'] or {}).items():
        if name in ('', '.', '..') or '/' in name or line_break_in(name):
            raise EntryError('%s: links[%r] must name a link in the directory itself: no "/", no line break, not "", '
                             '"." or ".."' % (path, name))
        if not isinstance(target, str) or not target or line_break_in(target):
            raise EntryError('%s: the target of links[%r] must be a path without line breaks, got %r'
                             % (path, name, target))
    if entry['validate'] is not None:
        validate_argv(path, entry['validate'])


def check_owner(entry):
    """Refuse an owner or group the host does not know, naming the path, before anything of the entry changes."""
    for what, name, lookup in (('owner', entry['owner'], pwd.getpwnam), ('group', entry['group'], grp.getgrnam)):
        if name is None or re.match(r'^[0-9]+$', name):
            continue
        try:
            lookup(name)
        except KeyError:
            raise EntryError('%s: the %s %r does not exist on the host; nothing of this entry was changed'
                             % (entry['path'], what, name))


def file_args(path, entry):
    """The attribute arguments AnsibleModule.set_fs_attributes_if_different expects, for one path."""
    return dict(path=path, owner=entry['owner'], group=entry['group'], mode=entry['mode'], seuser=None, serole=None,
                setype=None, selevel=None, secontext=[None, None, None, None], attributes=None)


def new_file_mode(entry):
    """The mode a new file gets: the wanted one (a symbolic mode resolved as for a file copy creates), else the default
    of the host's umask, as copy gives."""
    if entry['mode'] is not None:
        return resolve_mode(entry['path'], entry['mode'], None)
    umask = os.umask(0)
    os.umask(umask)
    return '0%o' % (0o666 & ~umask)


def read_existing(path):
    if os.path.islink(path) or not os.path.exists(path):
        return None
    if not os.path.isfile(path):
        raise EntryError('%s exists and is not a regular file; it was left untouched' % path)
    with open(path, 'rb') as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise EntryError('%s is larger than %d bytes, which no configuration file of ours is; it was left untouched'
                         % (path, MAX_FILE_BYTES))
    return data


def ensure_directory(module, entry, diffs):
    """Create the directory and its missing parents, each with the entry's attributes; then enforce them."""
    path = entry['path']
    if os.path.islink(path) and os.path.isdir(path):
        return module.set_fs_attributes_if_different(file_args(path, entry), False, expand=False)
    if os.path.exists(path) and not os.path.isdir(path):
        raise EntryError('%s exists and is not a directory; it was left untouched' % path)
    missing = []
    cur = path
    while cur and cur != os.path.dirname(cur) and not os.path.isdir(cur):
        missing.append(cur)
        cur = os.path.dirname(cur)
    if not missing:
        diff = dict(before_header=path, after_header=path, before={'path': path}, after={'path': path})
        changed = module.set_fs_attributes_if_different(file_args(path, entry), False, diff=diff, expand=False)
        if changed:
            diffs.append(diff)
        return changed
    diffs.append(dict(before_header=path, after_header=path, before={'path': path, 'state': 'absent'},
                      after={'path': path, 'state': 'directory'}))
    if module.check_mode:
        return True
    for cur in reversed(missing):
        try:
            os.mkdir(cur)
        except OSError as e:
            if not os.path.isdir(cur):
                raise EntryError('could not create the directory %s: %s' % (cur, to_native(e)))
        module.set_fs_attributes_if_different(file_args(cur, entry), True, expand=False)
    return True


def ensure_links(module, entry, diffs):
    """The entry's links in its directory; returns the paths of those that changed (or would)."""
    changed = []
    for name, target in sorted((entry['links'] or {}).items()):
        target = to_native(target)
        path = os.path.join(entry['path'], name)
        if os.path.islink(path):
            if os.readlink(path) == target:
                continue
            before = {'path': path, 'src': os.readlink(path)}
        elif os.path.isdir(path):
            raise EntryError('%s is a directory, not a link to %s; it was left untouched' % (path, target))
        elif os.path.exists(path):
            before = {'path': path, 'state': 'file'}
        else:
            before = {'path': path, 'state': 'absent'}
        diffs.append(dict(before_header=path, after_header=path, before=before, after={'path': path, 'src': target}))
        changed.append(path)
        if module.check_mode:
            continue
        tmp = os.path.join(entry['path'], '.%s.%d.gpuops' % (name, os.getpid()))
        os.symlink(target, tmp)
        os.rename(tmp, path)
    return changed


def setting_items(entry):
    """The lines of the entry's settings, as items of its lines."""
    return [dict(regexp=entry['setting_regexp'].replace('{key}', re.escape(key)),
                 line=entry['setting_line'].replace('{key}', key).replace('{value}', to_text(value)))
            for key, value in (entry['settings'] or {}).items()]


def edit_lines(path, existing, items):
    """The file's text with each item's line in place, as ansible.builtin.lineinfile puts it (regexp, no insertafter)."""
    lines = existing.splitlines(True)
    for item in items:
        try:
            pattern = re.compile(to_bytes(item['regexp'], errors='surrogate_or_strict'))
        except re.error as e:
            raise EntryError('%s: the regexp %r is not a regular expression: %s' % (path, item['regexp'], to_native(e)))
        new = to_bytes(item['line'], errors='surrogate_or_strict')
        stripped = [x.rstrip(b'\r\n') for x in lines]
        matches = [i for i, x in enumerate(stripped) if pattern.search(x)]
        if matches:
            i = matches[-1]
            if stripped[i] != new:
                lines[i] = new + (lines[i][len(stripped[i]):] or b'\n')
        elif new not in stripped:
            if lines and not lines[-1].endswith(b'\n'):
                lines[-1] += b'\n'
            lines.append(new + b'\n')
    return b''.join(lines)


def write_file(module, entry, diffs):
    # Lines are edited in a link's target, as lineinfile does; a file's content replaces a link, as copy does.
    path = os.path.realpath(entry['path']) if entry['state'] == 'lines' else entry['path']
    existing = read_existing(path)
    if entry['state'] == 'lines':
        items = list(entry['lines'] or []) + setting_items(entry)
        if not items:
            raise EntryError('%s: lines or settings are required to edit a file (state=lines)' % path)
        if existing is None:
            raise EntryError('%s does not exist, so its lines cannot be edited; nothing was written' % path)
        content = edit_lines(path, existing, items)
    else:
        if entry['content'] is None:
            raise EntryError('%s: content is required for a file (state=file)' % path)
        content = to_bytes(entry['content'], errors='surrogate_or_strict')
    if existing == content:
        diff = dict(before_header=path, after_header=path, before={'path': path}, after={'path': path})
        changed = module.set_fs_attributes_if_different(file_args(path, entry), False, diff=diff, expand=False)
        if changed:
            diffs.append(diff)
        return changed
    diffs.append(dict(before_header=path, after_header=path,
                      before='' if existing is None else to_text(existing, errors='surrogate_or_replace'),
                      after=to_text(content, errors='surrogate_or_replace')))
    if module.check_mode:
        return True
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        raise EntryError('the directory of %s does not exist; list it first with state=directory' % path)
    # The new file gets its final owner, group and mode before it is renamed over the old one: the wanted ones, else
    # the old file's, else (a new file) the umask's mode and the module's own user.
    attrs = dict(entry)
    if existing is None:
        attrs['mode'] = new_file_mode(entry)
    else:
        st = os.stat(path)
        attrs['mode'] = (resolve_mode(path, entry['mode'], st) if entry['mode'] is not None
                         else '0%o' % (st.st_mode & 0o7777))
        attrs['owner'] = entry['owner'] if entry['owner'] is not None else str(st.st_uid)
        attrs['group'] = entry['group'] if entry['group'] is not None else str(st.st_gid)
    if entry['validate'] is not None:
        validate(module, entry, path, content, attrs)
    fd, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), suffix='.gpuops', dir=directory)
    try:
        with os.fdopen(fd, 'wb') as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        module.set_fs_attributes_if_different(file_args(tmp, attrs), True, expand=False)
        if module.selinux_enabled():
            module.set_default_selinux_context(tmp, False)
        os.rename(tmp, path)
        tmp = None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return True


def validate(module, entry, path, content, attrs):
    """Run the entry's check on a copy of the new content, under the file's own name and attributes, in a private
    directory of the module's: whatever the check leaves behind (py_compile's __pycache__) goes with it."""
    private = tempfile.mkdtemp(dir=module.tmpdir)
    try:
        copy = os.path.join(private, os.path.basename(path))
        with open(copy, 'wb') as f:
            f.write(content)
        module.set_fs_attributes_if_different(file_args(copy, attrs), True, expand=False)
        # An argument vector, the copy's path put in place of %s as one argument: a name with a quote, a space, a
        # '%' or a ';' is passed as it is, and no shell reads it. run_command expands ~ and $VARIABLES in each word as
        # it did when it split the whole string; the path option expanded the path's own already (so this changes
        # nothing in it), and the copy's path is absolute, so a leading ~ in a name is never one to expand.
        argv = [PLACEHOLDER.sub(lambda m: copy if m.group(0) == '%s' else '%', arg)
                for arg in validate_argv(path, entry['validate'])]
        rc, out, err = module.run_command(argv)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    if rc != 0:
        raise EntryError('%s: the new content failed its check %r (rc %d): %s' % (
            path, entry['validate'], rc, (err or out).strip()))


def remove(module, entry, diffs):
    path = entry['path']
    if os.path.isdir(path) and not os.path.islink(path):
        raise EntryError('%s is a directory; this module removes only files and links, nothing was removed' % path)
    if not os.path.lexists(path):
        return False
    diffs.append(dict(before_header=path, after_header=path, before={'path': path, 'state': 'file'},
                      after={'path': path, 'state': 'absent'}))
    if not module.check_mode:
        os.unlink(path)
    return True


HANDLERS = dict(file=write_file, lines=write_file, directory=ensure_directory, absent=remove)


def main():
    module = AnsibleModule(
        argument_spec=dict(files=dict(type='list', elements='dict', required=True, options=ENTRY_SPEC)),
        supports_check_mode=True,
    )
    changed_paths = []
    diffs = []
    entries = [entry for entry in module.params['files'] if entry['enabled']]
    # Every entry's own values are checked before anything changes, in check mode as in a real run.
    for entry in entries:
        try:
            check_entry(entry)
        except EntryError as e:
            module.fail_json(msg=to_native(e), changed=False, changed_paths=[])
    for entry in entries:
        try:
            if not module.check_mode or os.path.lexists(entry['path']):
                check_owner(entry)
            if HANDLERS[entry['state']](module, entry, diffs):
                changed_paths.append(entry['path'])
            if entry['state'] == 'directory':
                changed_paths.extend(ensure_links(module, entry, diffs))
        except (EntryError, OSError, IOError) as e:
            msg = to_native(e)
            if entry['path'] not in msg:
                msg = '%s: %s' % (entry['path'], msg)
            module.fail_json(msg=msg, changed=bool(changed_paths), changed_paths=changed_paths)
    result = dict(changed=bool(changed_paths), changed_paths=changed_paths, paths=[entry['path'] for entry in entries])
    if module._diff:
        result['diff'] = diffs
    module.exit_json(**result)


if __name__ == '__main__':
    main()
