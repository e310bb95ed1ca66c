"""ansible-playbook under Mitogen, with the list of installed collections read once per run instead of once per task.

Test harness only (scripts/mitogen/ansible-playbook runs it for the Molecule runs under Mitogen). Mitogen's planner
lists every installed collection (ansible.collections.list.list_collection_dirs: the ~100 collections of the `ansible`
bundle, each MANIFEST.json read) for each module of a collection it runs, and keeps the answer in the worker process
that Ansible forks for that one task, so every such task pays it again (about 6% of a site re-run: docs/benchmarks.md).
Here the controller lists them once, before the first task, and every forked worker inherits the list.
Usage: python run_playbook.py ANSIBLE_PLAYBOOK_PATH ARGS...
"""
import runpy
import sys

import ansible_mitogen.planner
import ansible_mitogen.strategy

_collection_dirs = []


def _load_collections(invocation):
    """ansible_mitogen.planner._load_collections, from the list the controller made before its first task."""
    invocation._extra_sys_paths.update(_collection_dirs)  # pylint: disable=protected-access


def _run(original):
    def run(self, *args, **kwargs):
        if not _collection_dirs:
            import ansible.collections.list  # pylint: disable=import-outside-toplevel
            _collection_dirs.extend(path.decode("utf-8") for path in ansible.collections.list.list_collection_dirs())
        return original(self, *args, **kwargs)
    return run


ansible_mitogen.planner._load_collections = _load_collections  # pylint: disable=protected-access
ansible_mitogen.strategy.StrategyMixin.run = _run(ansible_mitogen.strategy.StrategyMixin.run)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
