"""config_files through ansible-playbook (issue 52): the refusals reach the play's output naming the path and the
entry, in check mode as in a real run, and the fixed modes and validate commands hold with arguments as Ansible passes
them (extra variables as JSON: a YAML boolean stays a boolean)."""
import json
import os
import stat

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import needs_ansible_playbook, run_playbook

HERE = os.path.dirname(os.path.abspath(__file__))

pytestmark = needs_ansible_playbook


def play(entries, check=False):
    args = ["-e", json.dumps({"config_files_entries": entries})] + (["--check"] if check else [])
    return run_playbook(os.path.join(HERE, "config_files_input.yml"), *args, timeout=300)


@pytest.mark.parametrize("check", [True, False])
def test_a_boolean_setting_is_refused_naming_the_file_and_the_key(tmp_path, check):
    login_defs = tmp_path / "login.defs"
    login_defs.write_text("FAILLOG_ENAB no\n")
    result = play([{"path": str(login_defs), "state": "lines", "settings": {"FAILLOG_ENAB": True},
                    "setting_line": "{key} {value}", "setting_regexp": "^#?{key}\\s"}], check=check)
    out = result.stdout
    assert result.returncode != 0, out
    assert "%s: settings['FAILLOG_ENAB'] is the boolean True" % login_defs in out, out
    assert "Traceback" not in out and login_defs.read_text() == "FAILLOG_ENAB no\n"


def test_a_line_break_is_refused_and_a_symbolic_mode_and_quoted_name_work(tmp_path):
    sshd = tmp_path / "sshd_config"
    sshd.write_text("Port 22\n")
    refused = play([{"path": str(sshd), "state": "lines",
                     "lines": [{"regexp": "^Banner", "line": "Banner none\nPermitRootLogin yes"}]}])
    assert refused.returncode != 0 and "lines[0].line" in refused.stdout and "line break" in refused.stdout
    assert sshd.read_text() == "Port 22\n"

    conf = tmp_path / "it's here.conf"
    conf.write_text("old\n")
    os.chmod(str(conf), 0o644)
    entries = [{"path": str(conf), "content": "good\n", "mode": "u+x", "validate": "grep -q good %s"}]
    result = play(entries)
    assert result.returncode == 0, result.stdout
    assert conf.read_text() == "good\n" and stat.S_IMODE(os.stat(str(conf)).st_mode) == 0o744
    again = play(entries)
    assert again.returncode == 0 and "CHANGED_PATHS=[]" in again.stdout, again.stdout
