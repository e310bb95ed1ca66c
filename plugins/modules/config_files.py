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
              - The whole line.
            type: str
            required: true
      links:
        description:
          - For O(files[].state=directory), symbolic links to put in the directory, name to target, as
            M(ansible.builtin.file) with C(state=link) and C(force=true) would. A link to another target or a file in
            its place is replaced; a directory in its place fails the task. The target need not exist yet.
        type: dict
      settings:
        description:
          - For O(files[].state=lines), C(key value) settings to put in place after O(files[].lines), each as the line
            O(files[].setting_line) with the regular expression O(files[].setting_regexp), in which C({key}) is the
            key (escaped in the regexp) and C({value}) the value.
        type: dict
      setting_line:
        description:
          - How a line of O(files[].settings) is written.
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
          - The permissions, as an octal string such as V('0644'), or a symbolic mode as M(ansible.builtin.file)
            accepts.
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
          - It must hold C(%s). It runs without a shell.
        type: str
attributes:
  check_mode:
    support: full
    description: In check mode nothing is written, created or removed; RV(changed_paths) and the diff say what would.
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

import os
import re
import shutil
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


def file_args(path, entry):
    """The attribute arguments AnsibleModule.set_fs_attributes_if_different expects, for one path."""
    return dict(path=path, owner=entry['owner'], group=entry['group'], mode=entry['mode'], seuser=None, serole=None,
                setype=None, selevel=None, secontext=[None, None, None, None], attributes=None)


def new_file_mode(entry):
    """The mode a new file gets when the entry names none: the default of the host's umask, as copy gives."""
    if entry['mode'] is not None:
        return entry['mode']
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
    if entry['validate'] is not None and '%s' not in entry['validate']:
        raise EntryError('%s: validate must contain %%s (the new file), got %r' % (path, entry['validate']))
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
        attrs['mode'] = entry['mode'] if entry['mode'] is not None else '0%o' % (st.st_mode & 0o7777)
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
        rc, out, err = module.run_command(entry['validate'] % copy)
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
    for entry in module.params['files']:
        if not entry['enabled']:
            continue
        if not os.path.isabs(entry['path']):
            module.fail_json(msg='%s: the path must be absolute' % entry['path'], changed=bool(changed_paths),
                             changed_paths=changed_paths)
        try:
            if HANDLERS[entry['state']](module, entry, diffs):
                changed_paths.append(entry['path'])
            if entry['state'] == 'directory':
                changed_paths.extend(ensure_links(module, entry, diffs))
        except (EntryError, OSError, IOError) as e:
            module.fail_json(msg=to_native(e), changed=bool(changed_paths), changed_paths=changed_paths)
    result = dict(changed=bool(changed_paths), changed_paths=changed_paths,
                  paths=[entry['path'] for entry in module.params['files'] if entry['enabled']])
    if module._diff:
        result['diff'] = diffs
    module.exit_json(**result)


if __name__ == '__main__':
    main()
