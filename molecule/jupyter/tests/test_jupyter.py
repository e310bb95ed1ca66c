"""Verify the jupyter role: pinned, unprivileged, TLS from the collection's CA, argon2 password, no anonymous access;
a real browser (headless Chromium) logs in, runs a cell and reads its output; a wrong password is refused."""
import os
import ssl
import urllib.error
import urllib.request

import pytest

from ansible_collections.gpuops.gpu_server.tests.support import jupyterlab

CA = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", ""), "pki", "ca.crt")
PASSWORD = "gpuops-jupyter-test-Qx7-Lm2"
NOTEBOOK = "gpuops-browser-check.ipynb"


@pytest.fixture(scope="module")
def address(host):
    """The host's default-route address, the one this controller reaches (`hostname -I` may list the bridge of a
    Docker engine inside the host first)."""
    return host.check_output("python3 -c %s", "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                             "s.connect(('192.0.2.1', 9)); print(s.getsockname()[0])")


def test_service_runs_unprivileged(host):
    svc = host.service("gpuops-jupyter")
    assert svc.is_enabled and svc.is_running
    user = host.check_output("systemctl show -p User --value gpuops-jupyter")
    assert user == "jupyter"
    procs = host.check_output("ps -o user= -C jupyter-lab || ps -o user=,args= -u jupyter")
    assert "root" not in procs.split()


def test_password_stored_only_as_argon2_hash(host):
    config = host.file("/etc/gpuops-jupyter/jupyter_server_config.py").content_string
    assert "argon2:" in config and PASSWORD not in config
    assert host.file("/etc/gpuops-jupyter/password.hash").mode == 0o600
    assert PASSWORD not in host.check_output("grep -rs '%s' /etc /srv /opt || true" % PASSWORD)


def test_pinned_versions(host):
    out = host.check_output("/opt/gpuops-jupyter/bin/pip freeze")
    assert "jupyterlab==4.6.6" in out and "jupyter_server==2.21.1" in out.replace("-", "_")


def test_tls_chain_from_the_collection_ca(address):
    ctx = ssl.create_default_context(cafile=CA)
    ctx.check_hostname = False  # the container's address is not in the certificate; the chain is what is checked
    with urllib.request.urlopen("https://%s:8888/login" % address, context=ctx, timeout=10) as r:
        assert r.status == 200


def test_anonymous_api_request_refused(address):
    ctx = ssl.create_default_context(cafile=CA)
    ctx.check_hostname = False
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen("https://%s:8888/api/contents" % address, context=ctx, timeout=10)
    assert e.value.code == 403


def test_plain_http_refused(address):
    with pytest.raises(Exception):
        urllib.request.urlopen("http://%s:8888/api/contents" % address, timeout=10).read()


@pytest.fixture(scope="module")
def certificate(address):
    return jupyterlab.verified_certificate(address, 8888, CA)


@pytest.fixture(scope="module")
def notebook(host):
    """A notebook with one code cell in the notebook directory, owned by the service user, as a user's upload is."""
    path = "/srv/jupyter/notebooks/%s" % NOTEBOOK
    host.run("echo %s | base64 -d > %s && chown jupyter:jupyter %s", jupyterlab.notebook_b64(), path, path)
    assert host.file(path).exists
    yield NOTEBOOK
    host.run("rm -f %s", path)


def test_browser_logs_in_with_the_password_and_runs_a_cell(address, certificate, notebook):
    url = "https://%s:8888" % address
    with jupyterlab.browser(certificate) as driver:
        jupyterlab.log_in(driver, url, password=PASSWORD)
        jupyterlab.lab_loaded(driver)
        output = jupyterlab.run_first_cell(driver, url, notebook, "jupyterlab.png")
    assert output.startswith("gpuops 42 3."), output


def test_browser_login_with_a_wrong_password_is_refused(address, certificate):
    url = "https://%s:8888" % address
    with jupyterlab.browser(certificate) as driver:
        jupyterlab.log_in(driver, url, password=PASSWORD + "-wrong")
        # The refusal comes after an argon2 check on the server and a page load: as long as the helpers' other waits
        # (tests/support/jupyterlab.py), not 30 s, on a loaded machine.
        jupyterlab.wait(driver, 60, lambda d: "Invalid credentials" in d.page_source, "the refusal on the page")
        assert "/login" in driver.current_url
        assert not driver.find_elements("css selector", "#jp-main-dock-panel")
