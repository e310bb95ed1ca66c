"""Verify the jupyter role: pinned, unprivileged, TLS from the collection's CA, argon2 password, no anonymous access;
a real browser (headless Chromium) logs in, runs a cell and reads its output; a wrong password is refused.
Last, the host is converged with a token: the login page offers no "Setup a Password", and rotating the token locks
out the old one and the browser sessions it opened; the scenario's password is put back at the end."""
import http.cookiejar
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request

import pytest

from ansible_collections.gpuops.gpu_server.tests.support import jupyterlab
from ansible_collections.gpuops.gpu_server.tests.support.playbook import molecule_playbook
from ansible_collections.gpuops.gpu_server.tests.support.waiting import wait_for

CA = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", ""), "pki", "ca.crt")
PASSWORD = "gpuops-jupyter-test-Qx7-Lm2"
NOTEBOOK = "gpuops-browser-check.ipynb"
# Tokens of the rotation tests (48 characters, as the role's random ones), and a password a token holder tries to set.
OLD_TOKEN = "OldTokenOfTheRotationTest0123456789abcdefghijklm"
NEW_TOKEN = "NewTokenOfTheRotationTest0123456789abcdefghijklm"
FORM_PASSWORD = "set-through-the-login-form-42"
# Jupyter Server's login form for a token holder: a field named new_password under "Setup a Password".
FORM_MARKERS = ("new_password", "Setup a Password")


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


# ---- A token: no password set from the login page, and a rotation locks the old token out ----

def converge(extra_vars=None):
    """ansible-playbook converge.yml on the instance, as Molecule runs it, with EXTRA_VARS (a dict) on top; returns
    its output."""
    rc, out = molecule_playbook(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "converge.yml"),
                                extra_vars=extra_vars)
    assert rc == 0, out[-6000:]
    return out


@pytest.fixture(scope="module")
def token():
    """The token JupyterLab runs with: this scenario converges it with OLD_TOKEN instead of its password, and puts the
    password back afterwards (the site scenario has a fixture of the same name that reads the demo's token)."""
    converge({"jupyter_auth": "token", "jupyter_token": OLD_TOKEN})
    yield OLD_TOKEN
    converge()


def tls_context():
    ctx = ssl.create_default_context(cafile=CA)
    ctx.check_hostname = False  # the container's address is not in the certificate; the chain is what is checked
    return ctx


def api_status(base, token_value, ctx=None):
    """The HTTP status of GET /api/status with TOKEN_VALUE in the Authorization header; None while nothing answers."""
    request = urllib.request.Request(base + "/api/status", headers={"Authorization": "token %s" % token_value})
    try:
        with urllib.request.urlopen(request, context=ctx, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


def form_login(base, password, new_password="", ctx=None):
    """Log in through the login form as a browser does (its _xsrf cookie and field), with a new password in the form's
    second field when given; returns the login page's HTML and the status of /api/status with the session cookie."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), urllib.request.HTTPSHandler(context=ctx))
    with opener.open(base + "/login", timeout=30) as r:
        page = r.read().decode()
    fields = {"_xsrf": [c.value for c in jar if c.name == "_xsrf"][0], "password": password}
    if new_password:
        fields["new_password"] = new_password
    try:
        with opener.open(base + "/login?next=%2Fapi%2Fstatus", urllib.parse.urlencode(fields).encode(), timeout=60) as r:
            r.read()
    except urllib.error.HTTPError:
        pass  # a refused login: the status below says so
    try:
        with opener.open(base + "/api/status", timeout=10) as r:
            return page, r.status
    except urllib.error.HTTPError as e:
        return page, e.code


@pytest.fixture(scope="module")
def jupyter_defaults_server(host, address):
    """Negative control: Jupyter Server from the role's virtual environment, as the service user, with Jupyter's own
    defaults and OLD_TOKEN (plain HTTP on 8899, a scratch configuration directory it may write): what the checks of
    the role's server below must tell apart."""
    scratch = "/var/tmp/gpuops-jupyter-defaults"
    host.run("rm -rf %s && install -d -o jupyter -g jupyter %s", scratch, scratch)
    host.check_output(
        "systemd-run --unit gpuops-jupyter-defaults --uid jupyter --gid jupyter -E HOME=%s -E JUPYTER_CONFIG_DIR=%s/config "
        "-E JUPYTER_DATA_DIR=%s/data -E JUPYTER_TOKEN=%s /opt/gpuops-jupyter/bin/jupyter server --no-browser "
        "--ip=0.0.0.0 --port=8899 --ServerApp.root_dir=%s", scratch, scratch, scratch, OLD_TOKEN, scratch)
    base = "http://%s:8899" % address
    try:
        wait_for(lambda: api_status(base, OLD_TOKEN) == 200, 120, "Jupyter Server with its defaults on port 8899")
        yield base, scratch
    finally:
        host.run("systemctl stop gpuops-jupyter-defaults; systemctl reset-failed gpuops-jupyter-defaults; rm -rf %s",
                 scratch)


def test_jupyters_own_default_lets_a_token_holder_set_a_password(host, jupyter_defaults_server):
    # The control: with Jupyter's default the token page carries the form, and a token holder's new password is
    # written to the configuration directory and opens the server from then on.
    base, scratch = jupyter_defaults_server
    page, status = form_login(base, OLD_TOKEN, new_password=FORM_PASSWORD)
    assert all(marker in page for marker in FORM_MARKERS), page
    assert status == 200
    assert host.file("%s/config/jupyter_server_config.json" % scratch).exists
    assert form_login(base, FORM_PASSWORD)[1] == 200


def test_token_login_page_offers_no_password_setup(address, certificate, token):
    from selenium.webdriver.common.by import By

    url = "https://%s:8888" % address
    with jupyterlab.browser(certificate) as driver:
        driver.get("%s/login" % url)
        jupyterlab.wait(driver, 60, lambda d: d.find_elements(By.ID, "password_input"), "no login form")
        page = driver.page_source
        assert not driver.find_elements(By.ID, "new_password_input")
    # The token page (where Jupyter's default offers the form), without the form.
    assert "Token authentication is enabled" in page, page
    assert not [marker for marker in FORM_MARKERS if marker in page], page


def test_a_new_password_sent_with_the_token_is_not_set(host, address, token):
    base = "https://%s:8888" % address
    assert form_login(base, token, new_password=FORM_PASSWORD, ctx=tls_context())[1] == 200  # the token logs in ...
    assert form_login(base, FORM_PASSWORD, ctx=tls_context())[1] == 403  # ... the password sent with it does not
    written = host.check_output("find /etc/gpuops-jupyter /srv/jupyter -name jupyter_server_config.json")
    assert written == "", written


def test_token_rotation_locks_out_the_old_token_and_its_sessions(host, address, certificate, token):
    from selenium.webdriver.common.by import By

    url = "https://%s:8888" % address
    secret = "/srv/jupyter/.local/share/jupyter/runtime/jupyter_cookie_secret"

    def login_page(message):
        jupyterlab.wait(driver, 60, lambda d: d.find_elements(By.ID, "password_input"), "%s (at %s)" % (message, driver.current_url))
        assert not driver.find_elements(By.CSS_SELECTOR, "#jp-main-dock-panel")

    with jupyterlab.browser(certificate) as driver:
        jupyterlab.log_in(driver, url, token=token)
        jupyterlab.lab_loaded(driver)
        before = host.check_output("sha256sum %s", secret)
        # A re-run with the same token changes nothing and logs nobody out: the session alone (no token in the
        # address) still opens JupyterLab. This is what the rotation below must end.
        recap = converge({"jupyter_auth": "token", "jupyter_token": token})
        assert "changed=0" in recap.split("PLAY RECAP")[-1], recap[-3000:]
        assert host.check_output("sha256sum %s", secret) == before
        driver.get("%s/lab" % url)
        jupyterlab.lab_loaded(driver)

        converge({"jupyter_auth": "token", "jupyter_token": NEW_TOKEN})

        assert host.check_output("sha256sum %s", secret) != before  # a new cookie secret
        driver.get("%s/lab" % url)
        login_page("the old token's session still opens JupyterLab after the rotation")
        # The old token in the address is refused too; the new one opens JupyterLab in the same browser.
        jupyterlab.log_in(driver, url, token=token)
        login_page("the old token was accepted after the rotation")
        jupyterlab.log_in(driver, url, token=NEW_TOKEN)
        jupyterlab.lab_loaded(driver)
    assert api_status(url, token, tls_context()) == 403
    assert api_status(url, NEW_TOKEN, tls_context()) == 200
    token_file = host.file("/etc/gpuops-jupyter/token")
    assert token_file.content_string.strip() == "JUPYTER_TOKEN=" + NEW_TOKEN and token_file.mode == 0o600
