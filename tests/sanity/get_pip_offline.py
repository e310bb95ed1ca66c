"""Offline stand-in for ansible-test's pip bootstrap script (get_pip_<ver>.py).

ansible-test downloads get-pip from its own host, which CI cannot reach; it uses
~/.ansible/test/cache/get_pip_<ver>.py when that exists. `make sanity` copies this file there.
ansible-test runs it as __main__ with pip-install arguments such as
`--disable-pip-version-check pip==24.2 --no-setuptools --no-wheel`.
"""
import ensurepip
import os
import subprocess
import sys

GET_PIP_ONLY = {"--no-setuptools", "--no-wheel"}


def main():
    # ensurepip sets PIP_CONFIG_FILE=/dev/null in this process, which would hide the machine's pip
    # configuration (its CA bundle, its indexes) from the pip we run next: keep the environment as it was.
    env = dict(os.environ)
    ensurepip.bootstrap()
    args = [a for a in sys.argv[1:] if a not in GET_PIP_ONLY]
    subprocess.check_call([sys.executable, "-m", "pip", "install"] + args, env=env)


if __name__ == "__main__":
    main()
