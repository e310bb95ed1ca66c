#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r'''
---
module: docker_daemon_config
short_description: Merge settings into Docker's daemon.json without losing the keys others wrote
version_added: 1.0.0
description:
  - Reads the JSON object in O(path) (Docker's C(/etc/docker/daemon.json)), deletes the key paths listed in
    O(remove), merges O(settings) into it and writes the result back atomically, as valid JSON.
  - Every key that O(settings) and O(remove) do not name is kept, with its value, as it was. Several roles
    (and the host's administrator) can therefore own different keys of the same file, for example
    C(log-opts) from one role and C(runtimes.nvidia) from another.
  - "Objects are merged key by key, recursively: O(settings={\"log-opts\": {\"max-size\": \"100m\"}}) keeps
    an existing C(log-opts.max-file). Every other value, B(arrays included), replaces what was there:
    O(settings={\"registry-mirrors\": [\"https://a\"]}) leaves exactly one mirror."
  - "The file is compared as data, not as text, by JSON type and value. When the merged object equals the existing
    one the file is not rewritten (its formatting is kept) and the module reports no change. C(1) and C(true),
    C(3.0) and C(3) differ (Docker reads them as different types): an existing C(\"live-restore\": 1) is replaced
    by O(settings={\"live-restore\": true})."
  - "When O(path) is a symbolic link, the module writes through it: the link's target is replaced atomically, in
    the target's directory, and the link stays as it was (as M(ansible.builtin.lineinfile) does). RV(target) names
    the file written. A dangling link's target is created."
  - "Concurrent runs on the same file (several roles or plays at once) do not lose updates: between reading the
    file and renaming the new one over it, a run holds an exclusive C(flock) lock on the file's directory, waits at
    most O(lock_timeout) seconds for it, and reads the file again under the lock. Only runs of this module take
    that lock."
  - When O(path) does not exist it is created, with its parent directories.
  - When O(path) holds something that is not a JSON object, the module fails with the line and column of
    the error and leaves the file untouched. So do a file that is not UTF-8, duplicate keys in one object (which
    one counts is not defined by JSON, and a rewrite would silently drop the other, so a person decides), C(NaN) or C(Infinity), which Python reads
    but JSON and Docker do not, a number out of the range of a double such as C(1e400) (Python would read it as
    infinity), arrays and objects nested deeper than 64 levels, and a file that is not a regular file or is larger
    than 4 MiB.
  - The file written is always strict JSON in UTF-8.
  - Any error (a read-only or missing directory, a failed O(validate), a bad O(validate) string) fails the task
    with a message naming the file, and leaves the file untouched.
author:
  - gpuops maintainers (@gpuops)
options:
  path:
    description:
      - The daemon configuration file.
    type: path
    default: /etc/docker/daemon.json
  settings:
    description:
      - The keys to set. Objects merge recursively into the existing ones; everything else, arrays included,
        replaces the existing value.
      - Docker expects strings for C(log-opts) values (V("100m"), V("3")), quote them.
      - Values must be writable as JSON; C(NaN) and C(Infinity) (YAML V(.nan), V(.inf)) fail the task, and so do
        dicts and lists nested deeper than 64 levels.
    type: dict
    default: {}
  remove:
    description:
      - Key paths to delete before O(settings) is merged. A path is a string of keys separated by dots
        (V(log-opts.max-file)), or a list of keys for a key that contains a dot.
      - A path that is not in the file is ignored.
      - Removing a whole object and setting some of its keys in O(settings) replaces that object.
    type: list
    elements: raw
    default: []
  backup:
    description:
      - Keep a copy of the file, with a timestamp in its name, before changing it.
    type: bool
    default: false
  validate:
    description:
      - A command that checks the new file before it replaces O(path); C(%s) is the new file's path.
      - For example V(dockerd --validate --config-file %s) (Docker 23.0 and later).
      - It must hold exactly one C(%s) and no other C(%) conversion; write C(%%) for a literal C(%).
    type: str
  lock_timeout:
    description:
      - Seconds to wait at the most for another run of this module that is changing the same file.
      - 0 or more. When the time runs out the task fails and nothing is written.
    type: int
    default: 60
extends_documentation_fragment:
  - ansible.builtin.files
attributes:
  check_mode:
    support: full
    description: In check mode nothing is written, no directory is created, and the result and diff say what would change.
  diff_mode:
    support: full
    description: The diff shows the file's text before and after.
  platform:
    support: full
    platforms: posix
    description: Runs wherever Python can write the file; Docker reads it on Linux hosts.
notes:
  - The new file is written with two-space indentation. Unchanged files keep their formatting.
  - An empty file counts as an empty object.
  - Docker reads the file only when it starts; restart it (a handler) when the module reports a change.
seealso:
  - name: Docker daemon configuration file
    description: Every key Docker accepts in daemon.json.
    link: https://docs.docker.com/reference/cli/dockerd/#daemon-configuration-file
'''

EXAMPLES = r'''
- name: Cap the json-file logs and give containers a large /dev/shm
  gpuops.gpu_server.docker_daemon_config:
    settings:
      log-driver: json-file
      log-opts:
        max-size: "100m"
        max-file: "3"
      default-shm-size: "8G"
  notify: Restart Docker

- name: Register the NVIDIA runtime (what nvidia-ctk runtime configure --runtime=docker writes)
  gpuops.gpu_server.docker_daemon_config:
    settings:
      runtimes:
        nvidia:
          path: nvidia-container-runtime
          args: []
    backup: true

- name: Stop making nvidia the default runtime
  gpuops.gpu_server.docker_daemon_config:
    remove:
      - default-runtime

- name: Remove a key whose name contains a dot
  gpuops.gpu_server.docker_daemon_config:
    remove:
      - ["features", "containerd-snapshotter"]
      - ["log-opts", "labels.example"]
'''

RETURN = r'''
path:
  description: The file that was (or, in check mode, would be) written.
  returned: always
  type: str
  sample: /etc/docker/daemon.json
config:
  description: The whole configuration after the change (in check mode, as it would be).
  returned: always
  type: dict
  sample: {"log-driver": "json-file", "log-opts": {"max-size": "100m", "max-file": "3"}, "data-root": "/srv/docker"}
removed:
  description: The key paths that were (or would be) deleted; paths that were not there are not listed.
  returned: always
  type: list
  elements: str
  sample: ["default-runtime"]
target:
  description: The file actually read and written, the link's target when O(path) is a symbolic link, else O(path).
  returned: always
  type: str
  sample: /srv/docker-config/daemon.json
created:
  description: Whether the file did not exist before.
  returned: always
  type: bool
  sample: false
backup_file:
  description: The copy of the file taken before the change.
  returned: when O(backup=true) and the file existed and changed
  type: str
  sample: /etc/docker/daemon.json.12345.2026-11-30@06:40:00~
'''

import errno
import fcntl
import os
import tempfile
import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _json_merge


# A daemon.json is a few hundred bytes; a file this large is not one, and is not read into memory.
MAX_FILE_BYTES = 4 * 1024 * 1024


def read_text(module, path, result):
    if not os.path.isfile(path):
        module.fail_json(msg='%s is not a regular file, so not a daemon configuration; it was left untouched' % path,
                         **result)
    try:
        with open(path, 'rb') as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except (IOError, OSError) as e:
        module.fail_json(msg='Could not read %s: %s' % (path, to_native(e)), **result)
    if len(raw) > MAX_FILE_BYTES:
        module.fail_json(msg='%s is larger than %d bytes, so not a daemon configuration; it was left untouched'
                             % (path, MAX_FILE_BYTES), **result)
    try:
        return raw.decode('utf-8')
    except UnicodeDecodeError as e:
        module.fail_json(msg='%s is not UTF-8 text, so not valid JSON (byte %d: %s); the file was left untouched'
                             % (path, e.start, e.reason), **result)


def make_parent(module, directory, result):
    if os.path.isdir(directory):
        return
    try:
        os.makedirs(directory, 0o755)
    except OSError as e:
        module.fail_json(msg='Could not create the directory %s: %s' % (directory, to_native(e)), **result)


def lock_directory(module, directory, timeout, result):
    """flock() the directory that holds the file, waiting at most ``timeout`` seconds; returns the fd to close.

    The directory, not the file: the file is replaced by a rename, so a lock on it would not be seen by the
    next run; the directory stays, and no lock file is left behind.
    """
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError as e:
        module.fail_json(msg='Could not open %s to lock it: %s' % (directory, to_native(e)), **result)
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                os.close(fd)
                module.fail_json(msg='Could not lock %s: %s' % (directory, to_native(e)), **result)
        if time.monotonic() >= deadline:
            os.close(fd)
            module.fail_json(msg='Another run still held the lock on %s after %d s (lock_timeout); nothing was '
                                 'written' % (directory, timeout), **result)
        time.sleep(0.05)


def validate_command(module, validate, tmp, path, result):
    if '%s' not in validate:
        module.fail_json(msg='validate must contain %%s (the new file), got: %s; %s was left untouched'
                             % (validate, path), **result)
    try:
        return validate % (tmp,)
    except (TypeError, ValueError) as e:
        module.fail_json(msg="validate must contain exactly one %%s and no other %% conversion (write %%%% for a "
                             "literal %%), got: %s (%s); %s was left untouched" % (validate, to_native(e), path),
                         **result)


def write_atomically(module, path, text, backup, result):
    """Write to a temporary file next to ``path``, validate it, back ``path`` up, rename the new file over it.

    Returns the backup's path, or None. Any OS error fails the module naming ``path``; ``path`` is then untouched.
    """
    backup_file = None
    directory = os.path.dirname(path) or '.'
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), dir=directory)
        with os.fdopen(fd, 'wb') as f:
            f.write(to_bytes(text, errors='strict'))
        validate = module.params['validate']
        if validate:
            rc, out, err = module.run_command(validate_command(module, validate, tmp, path, result),
                                              environ_update={'LC_ALL': 'C', 'LANG': 'C'})
            if rc != 0:
                module.fail_json(msg="The new configuration did not pass '%s' (exit code %d): %s; %s was left "
                                     "untouched" % (validate, rc, (err or out).strip(), path), rc=rc,
                                 stdout=out, stderr=err, **result)
        if backup and os.path.exists(path):
            backup_file = module.backup_local(path)
        module.atomic_move(tmp, path, unsafe_writes=module.params['unsafe_writes'])
    except (IOError, OSError) as e:
        module.fail_json(msg='Could not write %s: %s; the file was left untouched' % (path, to_native(e)), **result)
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return backup_file


def plan(module, path, result):
    """Read ``path`` and merge: ``(exists, before_text, after_text, after, removed, changed)``."""
    exists = os.path.exists(path)
    before_text = read_text(module, path, result) if exists else ''
    try:
        before = _json_merge.loads(before_text, source=path)
    except _json_merge.JsonDocumentError as e:
        module.fail_json(msg='%s. The file was left untouched: fix or remove it, then run again.' % e, **result)
    after, removed = _json_merge.apply(before, module.params['settings'], module.params['remove'])
    # Compared by JSON type and value: 1 is not true and 3.0 is not 3 for Docker.
    changed = not exists or not _json_merge.json_equal(after, before)
    try:
        after_text = _json_merge.dumps(after) if changed else before_text
    except ValueError as e:   # not reached: loads() and check_json() refuse what JSON cannot hold
        module.fail_json(msg='The new configuration cannot be written as JSON (%s); %s was left untouched'
                             % (e, path), **result)
    return exists, before_text, after_text, after, removed, changed


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', default='/etc/docker/daemon.json'),
            settings=dict(type='dict', default={}),
            remove=dict(type='list', elements='raw', default=[]),
            backup=dict(type='bool', default=False),
            validate=dict(type='str'),
            lock_timeout=dict(type='int', default=60),
        ),
        add_file_common_args=True,
        supports_check_mode=True,
    )
    path = module.params['path']
    # A symbolic link is written through: the file that changes is its target, replaced in its own directory.
    target = os.path.realpath(path) if os.path.islink(path) else path
    result = dict(changed=False, path=path, target=target, removed=[], created=False)

    if os.path.isdir(target):
        module.fail_json(msg='%s is a directory, not a daemon configuration file' % path, **result)
    if module.params['lock_timeout'] < 0:
        module.fail_json(msg='lock_timeout must be 0 or more seconds, got %d' % module.params['lock_timeout'],
                         **result)
    for p in module.params['remove']:
        try:
            _json_merge.parse_path(p)
        except ValueError as e:
            module.fail_json(msg='remove: %s' % e, **result)
    try:
        _json_merge.check_json(module.params['settings'])
    except ValueError as e:
        module.fail_json(msg='%s; %s was left untouched' % (e, path), **result)

    exists, before_text, after_text, after, removed, changed = plan(module, target, result)
    if changed and not module.check_mode:
        make_parent(module, os.path.dirname(target) or '.', result)
        lock = lock_directory(module, os.path.dirname(target) or '.', module.params['lock_timeout'], result)
        try:
            # Read again under the lock: another run may have replaced the file since the first read.
            exists, before_text, after_text, after, removed, changed = plan(module, target, result)
            if changed:
                backup_file = write_atomically(module, target, after_text, module.params['backup'], result)
                if backup_file:
                    result['backup_file'] = backup_file
        finally:
            os.close(lock)
    result.update(config=after, removed=removed, created=not exists)

    file_args = module.load_file_common_arguments(module.params, path=target)
    if not exists and file_args.get('mode') is None:
        file_args['mode'] = '0644'
    if not (module.check_mode and not exists):
        # In check mode an absent file has no attributes yet: it would be created with them.
        changed = module.set_fs_attributes_if_different(file_args, changed)

    result['changed'] = changed
    if module._diff:
        result['diff'] = dict(before=before_text, after=after_text,
                              before_header=target if exists else '%s (absent)' % target, after_header=target)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
