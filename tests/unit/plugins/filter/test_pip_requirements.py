# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""pip_requirements and its parse (_pip_requirements): the jupyter role's requirements file, once a Jinja loop that
wrote whatever it was given (a line break in a value added a requirement nobody wrote; an unquoted 4.10 pinned 4.1)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import jinja2
import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.gpu_server.plugins.filter import pip_requirements
from ansible_collections.gpuops.gpu_server.plugins.module_utils import _pip_requirements

FILTER = pip_requirements.FilterModule().filters()['pip_requirements']
PINS = {'jupyterlab': '4.6.6', 'jupyter-server': '2.21.1', 'ipykernel': '7.4.0', 'argon2-cffi': '25.1.0'}
# The loop that install.yml held before (rendered with Ansible's trim_blocks), for the byte-for-byte comparison.
OLD_LOOP = ("{% for name, version in pins.items() %}\n{{ name }}=={{ version }}\n{% endfor %}\n"
            "{% for line in extra %}\n{{ line }}\n{% endfor %}\n")


def old_render(pins, extra):
    return jinja2.Environment(trim_blocks=True).from_string(OLD_LOOP).render(pins=pins, extra=extra)


@pytest.mark.parametrize('pins,extra', [
    (PINS, []), (PINS, ['numpy==2.3.4', 'torch>=2.4,<3', '--extra-index-url https://pypi.example/simple']),
    ({}, []), ({}, ['numpy==2.3.4']), ({'Jupyter_Lab.x': '1!2.0.0rc1+local.7'}, []), ({'a': 'v1.0.post2.dev3'}, None),
])
def test_the_lines_are_the_old_loops_lines(pins, extra):
    # Same bytes as before for every good input: no host's requirements file changes with the move to the filter.
    assert FILTER(pins, extra) == old_render(pins, extra or [])


def test_the_pins_keep_their_order_and_come_before_the_extra_lines():
    text = FILTER({'b': '2', 'a': '1'}, ['c==3'])
    assert text == 'b==2\na==1\nc==3\n'


@pytest.mark.parametrize('pins,extra,words', [
    # versions that YAML typed (the fix: quote them)
    ({'jupyterlab': 4.1}, [], ['jupyter_packages[jupyterlab]', 'float', 'quote it']),
    ({'jupyterlab': 4}, [], ['int', 'quote it']), ({'jupyterlab': True}, [], ['bool', 'quote it']),
    ({'jupyterlab': None}, [], ['NoneType', 'quote it']), ({'jupyterlab': ['4']}, [], ['list']),
    # versions that are not one release
    ({'jupyterlab': '4.6.6\nevil==1'}, [], ['not a release']), ({'jupyterlab': '4.6.6\r'}, [], ['not a release']),
    ({'jupyterlab': ' 4.6.6'}, [], ['not a release']), ({'jupyterlab': ''}, [], ['not a release']),
    ({'jupyterlab': '>=4'}, [], ['not a release']), ({'jupyterlab': '4.*'}, [], ['not a release']),
    ({'jupyterlab': "4; python_version<'3.11'"}, [], ['not a release']),
    ({'jupyterlab': '\u0664.\u0666'}, [], ['not a release']), ({'jupyterlab': '\uff14.6'}, [], ['not a release']),
    ({'jupyterlab': '4' * 101}, [], ['not a release']),
    # names
    ({'jupyter lab': '1'}, [], ['not a package name']), ({'jupyterlab\n': '1'}, [], ['not a package name']),
    ({'': '1'}, [], ['not a package name']), ({'jupyterlab[all]': '1'}, [], ['not a package name']),
    ({'-r': '1'}, [], ['not a package name']), ({4: '1'}, [], ['not a package name']),
    ({'jüpyter': '1'}, [], ['not a package name']), ({'a' * 201: '1'}, [], ['not a package name']),
    ({'jupyter_server': '1', 'Jupyter-Server': '2'}, [], ['same package', 'jupyter-server']),
    # extra lines
    ({}, ['numpy==2\nevil==1'], ['jupyter_extra_packages[0]', 'line break']),
    ({}, ['ok==1', 'numpy==2\r'], ['jupyter_extra_packages[1]', 'line break']),
    ({}, ['a\x0bb'], ['line break']), ({}, ['a\x85b'], ['line break']), ({}, ['a\u2028b'], ['line break']),
    ({}, [''], ['empty']), ({}, ['   '], ['empty']), ({}, [3], ['int']), ({}, [None], ['NoneType']),
    ({}, [['numpy']], ['list']), ({}, ['x' * 1001], ['1001 characters']),
    # containers
    (['jupyterlab==1'], [], ['jupyter_packages', 'not a mapping']), ('jupyterlab', [], ['not a mapping']),
    ({}, 'numpy==2', ['jupyter_extra_packages', 'not a list']), ({}, {'numpy': '2'}, ['not a list']),
])
def test_a_bad_value_fails_with_the_variable_the_entry_and_the_fix(pins, extra, words):
    with pytest.raises(AnsibleFilterError) as error:
        FILTER(pins, extra, 'jupyter_packages', 'jupyter_extra_packages')
    assert str(error.value).startswith('pip_requirements: jupyter_'), error.value
    for word in words:
        assert word in str(error.value), (word, error.value)


def test_a_line_break_would_have_added_a_requirement_with_the_old_loop():
    # Negative control: the old loop writes the injected line as a requirement of its own; the parse refuses it.
    pins = {'jupyterlab': '4.6.6\nevil-package==6.6.6'}
    assert 'evil-package==6.6.6' in old_render(pins, []).splitlines()
    with pytest.raises(_pip_requirements.RequirementsError):
        _pip_requirements.render(pins)


def test_an_unquoted_version_would_have_pinned_another_release_with_the_old_loop():
    # Negative control: YAML's 4.10 is the float 4.1, which the old loop pinned as jupyterlab==4.1.
    assert old_render({'jupyterlab': 4.10}, []) == 'jupyterlab==4.1\n'
    with pytest.raises(_pip_requirements.RequirementsError, match='quote it'):
        _pip_requirements.render({'jupyterlab': 4.10})
