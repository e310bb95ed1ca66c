"""Drive JupyterLab in a real browser: Debian's headless Chromium through its chromedriver (selenium, from the pinned
toolchain), as a user would. Shared by the jupyter and site scenarios' verifiers.

TLS: the browser accepts only the server's own public key (--ignore-certificate-errors-spki-list), after the caller
has checked with Python's ssl that the certificate chains to the expected CA; no certificate error is ignored
otherwise."""
import base64
import contextlib
import hashlib
import json
import os
import shutil
import ssl
import tempfile

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from ansible_collections.gpuops.gpu_server.tests.support.waiting import wait_for

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ARTIFACTS = os.path.join(os.environ.get("MOLECULE_PROJECT_DIRECTORY", os.getcwd()), "build", "artifacts")
CELL = 'import platform; print("gpuops", 6 * 7, platform.python_version())'


def verified_certificate(address, port, cafile):
    """The server's certificate (PEM) after Python's ssl verified its chain against CAFILE."""
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.check_hostname = False  # a container's address is not among the names; the chain is what is checked
    with contextlib.closing(ctx.wrap_socket(__import__("socket").create_connection((address, port), 10))) as s:
        der = s.getpeercert(binary_form=True)
    return ssl.DER_cert_to_PEM_cert(der)


def spki_hash(pem):
    """base64(sha256(SubjectPublicKeyInfo)), the form Chromium's --ignore-certificate-errors-spki-list takes."""
    key = x509.load_pem_x509_certificate(pem.encode()).public_key()
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


@contextlib.contextmanager
def browser(pem):
    """A headless Chromium that trusts exactly the key of certificate PEM."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="gpuops-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--window-size=1600,1000", "--user-data-dir=%s" % profile,
                "--ignore-certificate-errors-spki-list=%s" % spki_hash(pem)]:
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait(driver, seconds, condition, what):
    """condition(driver), polled until it is truthy (tests/support/waiting.py). JupyterLab re-renders while it loads:
    an element found in one poll can be gone by the next call on it (StaleElementReferenceException, seen in a CI run);
    that poll counts as not yet, as one that finds no element does (what selenium's own WebDriverWait ignores)."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    return wait_for(lambda: condition(driver), seconds, what, step=0.5,
                    ignore=(NoSuchElementException, StaleElementReferenceException))


def log_in(driver, url, password=None, token=None):
    """Open URL/lab and log in with the password (the login form) or the token (JupyterLab's ?token=)."""
    from selenium.webdriver.common.by import By

    if token is not None:
        driver.get("%s/lab?token=%s" % (url, token))
    else:
        driver.get("%s/lab" % url)
        field = wait(driver, 60, lambda d: d.find_elements(By.ID, "password_input"), "the login form")[0]
        field.send_keys(password)
        driver.find_element(By.ID, "login_submit").click()


def lab_loaded(driver, seconds=90):
    from selenium.webdriver.common.by import By
    return wait(driver, seconds, lambda d: d.find_elements(By.CSS_SELECTOR, "#jp-main-dock-panel"),
                lambda: "JupyterLab to load (the browser is at %s)" % driver.current_url)


def notebook_b64(source=CELL):
    """A notebook with one code cell, base64-encoded for a shell on the host (no quoting to get wrong)."""
    notebook = {
        "cells": [{"cell_type": "code", "execution_count": None, "id": "gpuops-check", "metadata": {}, "outputs": [],
                   "source": [source]}],
        "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return base64.b64encode(json.dumps(notebook).encode()).decode()


def run_first_cell(driver, url, notebook, screenshot):
    """Open NOTEBOOK (a path under the notebook directory), run its first cell with Shift+Enter as a user does, and
    return the cell's output text; the page is kept as SCREENSHOT under build/artifacts."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    def editors(d):
        return [e for e in d.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell .cm-content") if e.is_displayed()]

    driver.get("%s/lab/tree/%s" % (url, notebook))
    try:
        editor = wait(driver, 90, editors, "the notebook to open")[0]
    except AssertionError:
        # On a busy CI machine the lab page once stalled while loading: load it once more, as a user would; it must still
        # open.
        driver.refresh()
        editor = wait(driver, 120, editors, "the notebook to open after a reload")[0]
    # A user waits for the kernel to be idle before running a cell (one sent earlier would be queued).
    wait(driver, 90, lambda d: d.find_elements(By.CSS_SELECTOR, ".jp-Notebook-ExecutionIndicator[data-status='idle']"),
         "the kernel to start and be idle")
    os.makedirs(ARTIFACTS, exist_ok=True)

    def outputs(d):
        return [e for e in d.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output") if e.text.strip()]

    try:
        # Shift+Enter, as a user does; on a loaded machine the first key press can land before the editor takes
        # input: a cell whose prompt is still "[ ]:" after a while was not sent, and is sent again (twice at most).
        for _attempt in range(3):
            ActionChains(driver).move_to_element(editor).click().key_down(Keys.SHIFT).send_keys(Keys.ENTER) \
                .key_up(Keys.SHIFT).perform()
            try:
                wait(driver, 20, lambda d: outputs(d) or any(
                    p.text.strip() not in ("", "[ ]:") for p in d.find_elements(By.CSS_SELECTOR, ".jp-InputPrompt")[:1]),
                    "the cell to be sent")
                break
            except Exception:  # noqa: BLE001 (not sent in time, or the page changed under the check: send it again)
                continue
        out = wait(driver, 180, outputs, "the cell's output")
    except Exception:
        driver.save_screenshot(os.path.join(ARTIFACTS, "failed-" + screenshot))
        raise
    driver.save_screenshot(os.path.join(ARTIFACTS, screenshot))
    return out[0].text
