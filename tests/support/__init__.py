# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the tests share, each once: `playbook` runs ansible-playbook (tests/unit, tests/preflight), `waiting` is the
poller (Molecule verifiers, browser checks), `jupyterlab` drives JupyterLab in a headless browser (the jupyter and site
verifiers). Import them as ansible_collections.gpuops.gpu_server.tests.support.<module>: pyproject.toml puts
.cache/collections on pytest's path, for the unit tests and for the Molecule verifiers (pytest-testinfra) alike.
The S3 server of the Molecule scenarios is a fixture like the others: tests/fixtures/moto."""
