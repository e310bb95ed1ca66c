"""Verify vendor_repo on its own: deb822 source, key, pin, old source removed, nothing from the refused calls; and
common's apt_index, which every caller runs after vendor_repo: once per run, and again after a source change."""
import os

from ansible_collections.gpuops.gpu_server.tests.fixtures.apt_repo.repo_checks import assert_vendor_repo
from ansible_collections.gpuops.gpu_server.tests.support.playbook import molecule_playbook


def test_repository(host):
    assert_vendor_repo(host, "fixture", "http://127.0.0.1:8765")


def test_pin_holds_the_older_version(host):
    pin = host.file("/etc/apt/preferences.d/fixture")
    assert pin.mode == 0o644
    assert "Pin: version 1.0-1" in pin.content_string
    assert host.package("gpuops-vendor-fixture").version == "1.0-1"


def test_refused_calls_wrote_nothing(host):
    assert not host.file("/etc/apt/sources.list.d/direct.sources").exists
    assert not host.file("/etc/apt/keyrings/direct.asc").exists


def test_the_apt_index_is_read_once_per_run_and_again_after_a_source_change():
    here = os.path.dirname(os.path.abspath(__file__))
    rc, out = molecule_playbook(os.path.join(here, "apt_index.yml"), timeout=600)
    assert rc == 0, out
    # Five calls (apt_index.yml asserts which ran apt): the include's header appears once per call, the apt task's
    # only where the include ran (the first call, and the one after a source change).
    assert out.count("common : Read the apt package index's age, and refresh it where it is too old or a source "
                     "changed]") == 5, out
    assert out.count("common : Refresh the apt package index (a source changed, or the index is missing or older than "
                     "its valid time)]") == 2, out
    assert "failed=0" in out, out
    # A new run: the stamp apt wrote a minute ago is fresh, so apt is not run; a source change still refreshes.
    rc, out = molecule_playbook(os.path.join(here, "apt_index_fresh.yml"), timeout=600)
    assert rc == 0, out
    assert "failed=0" in out, out
