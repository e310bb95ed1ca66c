# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Spot interruption notices: the parsers on the providers' documented bodies, DMI detection, and Poller against
tests/fixtures/spot/fake_metadata.py."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import email.message
import http.server
import io
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _spot
from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT
from ansible_collections.gpuops.gpu_server.tests.unit.conftest import HTTPResponse, load_script

FAKE_METADATA = os.path.join(ROOT, 'tests', 'fixtures', 'spot', 'fake_metadata.py')


fake_metadata = load_script('fake_metadata', 'tests', 'fixtures', 'spot', 'fake_metadata.py')


# ---------------------------------------------------------------------------------------------------------------
# Constants

def test_constants_cover_every_provider():
    assert _spot.PROVIDERS == ('aws', 'gcp', 'azure', 'alibaba', 'tencent')
    assert set(_spot.DEFAULT_BASE_URLS) == set(_spot.PROVIDERS)
    assert set(_spot.NOTICE_WINDOW_SECONDS) == set(_spot.PROVIDERS)
    assert set(_spot.PARSERS) == set(_spot.PROVIDERS)
    assert _spot.NOTICE_WINDOW_SECONDS['aws'] == 120
    assert _spot.NOTICE_WINDOW_SECONDS['gcp'] == 30
    assert _spot.NOTICE_WINDOW_SECONDS['azure'] == 30
    assert _spot.DEFAULT_BASE_URLS['alibaba'] == 'http://100.100.100.200'


def test_fake_server_windows_match_the_module():
    assert fake_metadata.WINDOWS == _spot.NOTICE_WINDOW_SECONDS
    assert set(fake_metadata.PATHS.values()) == set(_spot.PROVIDERS)
    for provider, path in _spot.PATHS.items():
        assert fake_metadata.PATHS[path.split('?', maxsplit=1)[0]] == provider


# ---------------------------------------------------------------------------------------------------------------
# AWS

def test_aws_documented_example():
    # The example in "Spot Instance interruption notices", instance-action section:
    # https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html
    notice = _spot.parse_aws(200, b'{"action": "stop", "time": "2017-09-18T08:22:00Z"}')
    assert notice == _spot.Notice('aws', 'stop', 1505722920.0, notice.detail)
    assert 'stop' in notice.detail and '2017-09-18T08:22:00Z' in notice.detail


@pytest.mark.parametrize('action', ['terminate', 'stop', 'hibernate'])
def test_aws_documented_actions(action):
    notice = _spot.parse_aws(200, json.dumps({'action': action, 'time': '2017-09-18T08:22:00Z'}))
    assert notice.action == action
    assert notice.deadline == 1505722920.0


def test_aws_404_is_no_notice():
    # "If Amazon EC2 is not preparing to stop or terminate the instance ... you receive an HTTP 404 error" (same page).
    assert _spot.parse_aws(404, b'<?xml version="1.0"?><html>404 - Not Found</html>') is None


def test_aws_unknown_action_is_still_a_notice():
    assert _spot.parse_aws(200, '{"action": "Reboot", "time": "2017-09-18T08:22:00Z"}').action == 'reboot'


@pytest.mark.parametrize('body', [
    b'',
    b'terminate',
    b'[]',
    b'{"time": "2017-09-18T08:22:00Z"}',
    b'{"action": "terminate"}',
    b'{"action": "", "time": "2017-09-18T08:22:00Z"}',
    b'{"action": "terminate", "time": "soon"}',
    b'{"action": "terminate", "time": "2017-09-18"}',
    b'{"action": "terminate", "time": 1505722920}',
])
def test_aws_malformed(body):
    with pytest.raises(ValueError):
        _spot.parse_aws(200, body)


# ---------------------------------------------------------------------------------------------------------------
# GCP

def test_gcp_documented_bodies():
    # https://cloud.google.com/compute/docs/instances/create-use-preemptible#detecting_if_an_instance_was_preempted:
    # curl "http://metadata.google.internal/computeMetadata/v1/instance/preempted" -H "Metadata-Flavor: Google"
    # -> TRUE (FALSE while not preempted).
    notice = _spot.parse_gcp(200, b'TRUE', now=1000.0)
    assert notice == _spot.Notice('gcp', 'preempt', 1030.0, 'instance/preempted is TRUE')
    assert _spot.parse_gcp(200, b'FALSE', now=1000.0) is None


def test_gcp_default_now_is_the_clock():
    before = time.time()
    notice = _spot.parse_gcp(200, 'TRUE\n')
    assert before + 30 <= notice.deadline <= time.time() + 30


@pytest.mark.parametrize('body', [b'', b'MAYBE', b'1', b'{"preempted": true}'])
def test_gcp_malformed(body):
    with pytest.raises(ValueError):
        _spot.parse_gcp(200, body)


# ---------------------------------------------------------------------------------------------------------------
# Azure

def _azure_doc(*events):
    return json.dumps({'DocumentIncarnation': 2, 'Events': list(events)})


def _azure_event(**fields):
    # Field names and shapes from the "Event properties" table and the example response of
    # https://learn.microsoft.com/azure/virtual-machines/linux/scheduled-events (EventId a GUID, Resources a list of
    # VM names, NotBefore "Mon, 19 Sep 2016 18:29:47 GMT").
    event = {
        'EventId': '602d9444-d2cd-49c7-8624-8643e7171297',
        'EventType': 'Preempt',
        'ResourceType': 'VirtualMachine',
        'Resources': ['FrontEnd_IN_0', 'BackEnd_IN_0'],
        'EventStatus': 'Scheduled',
        'NotBefore': 'Mon, 19 Sep 2016 18:29:47 GMT',
        'Description': '',
        'EventSource': 'Platform',
        'DurationInSeconds': -1,
    }
    event.update(fields)
    return event


def test_azure_preempt():
    notice = _spot.parse_azure(200, _azure_doc(_azure_event()))
    assert notice.provider == 'azure'
    assert notice.action == 'preempt'
    assert notice.deadline == 1474309787.0
    assert '602d9444-d2cd-49c7-8624-8643e7171297' in notice.detail


def test_azure_no_events():
    # With nothing scheduled the service answers {"DocumentIncarnation": n, "Events": []}.
    assert _spot.parse_azure(200, b'{"DocumentIncarnation": 0, "Events": []}') is None


@pytest.mark.parametrize('event_type', ['Reboot', 'Redeploy', 'Freeze'])
def test_azure_maintenance_events_are_not_evictions(event_type):
    assert _spot.parse_azure(200, _azure_doc(_azure_event(EventType=event_type))) is None


def test_azure_terminate_counts_as_terminate():
    notice = _spot.parse_azure(200, _azure_doc(_azure_event(EventType='Terminate', EventSource='User')))
    assert notice.action == 'terminate'


def test_azure_started_event_without_not_before_is_now():
    notice = _spot.parse_azure(200, _azure_doc(_azure_event(EventStatus='Started', NotBefore='')), now=5000.0)
    assert notice.deadline == 5000.0


@pytest.mark.parametrize('status', ['Completed', 'Canceled'])
def test_azure_finished_events_do_not_count(status):
    assert _spot.parse_azure(200, _azure_doc(_azure_event(EventStatus=status))) is None


def test_azure_vm_name_filter():
    body = _azure_doc(_azure_event(Resources=['gpu-node-7']))
    assert _spot.parse_azure(200, body, vm_name='gpu-node-7').action == 'preempt'
    assert _spot.parse_azure(200, body, vm_name='GPU-Node-7').action == 'preempt'
    assert _spot.parse_azure(200, body, vm_name='gpu-node-8') is None
    assert _spot.parse_azure(200, body).action == 'preempt'


def test_azure_earliest_event_wins():
    body = _azure_doc(
        _azure_event(EventId='late', NotBefore='Mon, 19 Sep 2016 18:35:00 GMT'),
        _azure_event(EventId='freeze', EventType='Freeze', NotBefore='Mon, 19 Sep 2016 18:00:00 GMT'),
        _azure_event(EventId='early', NotBefore='Mon, 19 Sep 2016 18:29:47 GMT'),
    )
    notice = _spot.parse_azure(200, body)
    assert 'early' in notice.detail
    assert notice.deadline == 1474309787.0


@pytest.mark.parametrize('body', [
    b'',
    b'not json',
    b'[]',
    b'{"Events": {}}',
    b'{"Events": ["Preempt"]}',
    _azure_doc(_azure_event(NotBefore='tomorrow')).encode(),
    _azure_doc(_azure_event(Resources='gpu-node-7')).encode(),
])
def test_azure_malformed(body):
    with pytest.raises(ValueError):
        _spot.parse_azure(200, body)


# ---------------------------------------------------------------------------------------------------------------
# Alibaba

def test_alibaba_documented_example():
    # "Detect and handle spot instance interruptions", instance metadata: HTTP 404 = available; a UTC timestamp,
    # e.g. 2015-01-05T18:02:00Z = reclaimed at that time.
    # https://www.alibabacloud.com/help/en/ecs/user-guide/query-the-interruption-events-of-preemptible-instances
    notice = _spot.parse_alibaba(200, b'2015-01-05T18:02:00Z')
    assert notice == _spot.Notice('alibaba', 'terminate', 1420480920.0, 'termination-time 2015-01-05T18:02:00Z')
    assert _spot.parse_alibaba(404, b'') is None


@pytest.mark.parametrize('body', [b'', b'\n', b'soon', b'2015-01-05', b'18:02:00'])
def test_alibaba_malformed(body):
    with pytest.raises(ValueError):
        _spot.parse_alibaba(200, body)


# ---------------------------------------------------------------------------------------------------------------
# Tencent

def test_tencent_documented_example():
    # "Querying the Reclamation Status of a Spot Instance": returns e.g. 2018-08-18 12:05:33, "the OS time of the
    # spot instance when it's terminated (in UTC+8)"; 404 = not a spot instance or not being reclaimed.
    # https://www.tencentcloud.com/document/product/213/32487
    notice = _spot.parse_tencent(200, b'2018-08-18 12:05:33\n')
    assert notice.provider == 'tencent' and notice.action == 'terminate'
    assert notice.deadline == 1534565133.0          # 2018-08-18 04:05:33 UTC
    assert _spot.parse_tencent(404, b'') is None


def test_tencent_iso_with_zone_is_read_with_its_zone():
    assert _spot.parse_tencent(200, b'2018-08-18T04:05:33Z').deadline == 1534565133.0


@pytest.mark.parametrize('body', [b'', b'soon', b'2018-08-18', b'18/08/2018 12:05:33'])
def test_tencent_malformed(body):
    with pytest.raises(ValueError):
        _spot.parse_tencent(200, body)


@pytest.mark.parametrize('provider', _spot.PROVIDERS)
@pytest.mark.parametrize('status', [401, 403, 500, 503])
def test_parsers_reject_other_statuses(provider, status):
    with pytest.raises(ValueError):
        _spot.PARSERS[provider](status, b'')


# ---------------------------------------------------------------------------------------------------------------
# Which cloud

@pytest.mark.parametrize('dmi, expected', [
    # EC2 Nitro (e.g. p4d.24xlarge): "Amazon EC2" as system, BIOS and board vendor.
    ({'sys_vendor': 'Amazon EC2', 'product_name': 'p4d.24xlarge', 'bios_vendor': 'Amazon EC2',
      'board_vendor': 'Amazon EC2', 'chassis_asset_tag': 'Amazon EC2'}, 'aws'),
    ({'bios_vendor': 'Amazon EC2'}, 'aws'),
    # EC2 on Xen (e.g. p2/p3): everything says Xen but the version.
    ({'sys_vendor': 'Xen', 'product_name': 'HVM domU', 'product_version': '4.11.amazon', 'bios_vendor': 'Xen',
      'bios_version': '4.11.amazon'}, 'aws'),
    ({'sys_vendor': 'Xen', 'product_name': 'HVM domU', 'product_version': '4.2.amazon'}, 'aws'),
    ({'sys_vendor': 'Google', 'product_name': 'Google Compute Engine', 'bios_vendor': 'Google',
      'board_vendor': 'Google', 'chassis_asset_tag': ''}, 'gcp'),
    ({'product_name': 'Google Compute Engine'}, 'gcp'),
    ({'sys_vendor': 'Microsoft Corporation', 'product_name': 'Virtual Machine', 'bios_vendor': 'Microsoft Corporation',
      'board_vendor': 'Microsoft Corporation', 'chassis_asset_tag': '7783-7084-3265-9085-8269-3286-77'}, 'azure'),
    ({'sys_vendor': 'Alibaba Cloud', 'product_name': 'Alibaba Cloud ECS', 'bios_vendor': 'SeaBIOS'}, 'alibaba'),
    ({'product_name': 'Alibaba Cloud ECS'}, 'alibaba'),
    ({'sys_vendor': 'Tencent Cloud', 'product_name': 'CVM', 'bios_vendor': 'SeaBIOS'}, 'tencent'),
    ({'product_name': 'Tencent Cloud CVM'}, 'tencent'),
    ({'sys_vendor': ' amazon ec2\n'}, 'aws'),
], ids=['aws-nitro', 'aws-bios-only', 'aws-xen', 'aws-xen-product-version', 'gcp', 'gcp-product-only', 'azure',
        'alibaba', 'alibaba-product-only', 'tencent', 'tencent-cloud-init-name', 'case-and-space'])
def test_detect_provider(dmi, expected):
    assert _spot.detect_provider(dmi) == expected


@pytest.mark.parametrize('dmi', [
    {'sys_vendor': 'QEMU', 'product_name': 'Standard PC (Q35 + ICH9, 2009)', 'product_version': 'pc-q35-8.2',
     'bios_vendor': 'SeaBIOS', 'chassis_asset_tag': ''},
    # Hyper-V on a workstation: Microsoft strings but not Azure's asset tag.
    {'sys_vendor': 'Microsoft Corporation', 'product_name': 'Virtual Machine', 'bios_vendor': 'Microsoft Corporation',
     'chassis_asset_tag': '1234-5678-9012-3456-7890-1234-56'},
    # A Chromebook: sys_vendor Google, coreboot firmware.
    {'sys_vendor': 'Google', 'product_name': 'Eve', 'bios_vendor': 'coreboot'},
    {'sys_vendor': 'VMware, Inc.', 'product_name': 'VMware Virtual Platform', 'bios_vendor': 'Phoenix Technologies LTD'},
    {'sys_vendor': 'Xen', 'product_name': 'HVM domU', 'product_version': '4.16.3'},
    {'sys_vendor': 'Supermicro', 'product_name': 'AS -4125GS-TNRT', 'board_vendor': 'Supermicro'},
    {},
    {'sys_vendor': None, 'product_name': None},
], ids=['qemu-q35', 'hyper-v', 'chromebook', 'vmware', 'plain-xen', 'bare-metal', 'empty', 'none-values'])
def test_detect_provider_non_cloud(dmi):
    assert _spot.detect_provider(dmi) is None


def test_read_dmi(tmp_path):
    (tmp_path / 'sys_vendor').write_text('Amazon EC2\n')
    (tmp_path / 'product_name').write_text('g5.xlarge\n')
    (tmp_path / 'chassis_asset_tag').write_bytes(b'  Amazon EC2\x00\n')
    (tmp_path / 'bios_vendor').mkdir()           # unreadable as a file: skipped
    (tmp_path / 'product_serial').write_text('ec2abc\n')   # not a key read_dmi reads
    dmi = _spot.read_dmi(str(tmp_path))
    assert dmi == {'sys_vendor': 'Amazon EC2', 'product_name': 'g5.xlarge', 'chassis_asset_tag': 'Amazon EC2'}
    assert _spot.detect_provider(dmi) == 'aws'


def test_read_dmi_missing_root(tmp_path):
    assert _spot.read_dmi(str(tmp_path / 'nope')) == {}


# ---------------------------------------------------------------------------------------------------------------
# Poller against the fake metadata service

@pytest.fixture
def state_file(tmp_path):
    return tmp_path / 'state'


@pytest.fixture
def fake_server(state_file):
    servers = []

    def start(**options):
        options.setdefault('quiet', True)
        server = fake_metadata.start_in_thread(str(state_file), **options)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _set_state(path, word):
    path.write_text(word + '\n')
    return os.stat(str(path)).st_mtime


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.mark.parametrize('provider', _spot.PROVIDERS)
def test_poller_none(fake_server, state_file, provider):
    server = fake_server()
    poller = _spot.Poller(provider, base_url=server.base_url, vm_name='fake-vm-0')
    assert poller.check() is None                  # no state file
    _set_state(state_file, 'none')
    assert poller.check() is None


@pytest.mark.parametrize('provider, action', [
    ('aws', 'terminate'), ('gcp', 'preempt'), ('azure', 'preempt'), ('alibaba', 'terminate'), ('tencent', 'terminate'),
])
def test_poller_notice(fake_server, state_file, provider, action):
    server = fake_server()
    poller = _spot.Poller(provider, base_url=server.base_url, vm_name='fake-vm-0')
    mtime = _set_state(state_file, 'notice')
    before = time.time()
    notice = poller.check()
    after = time.time()
    assert notice.provider == provider
    assert notice.action == action
    window = _spot.NOTICE_WINDOW_SECONDS[provider]
    if provider == 'gcp':
        # GCP gives no time: the deadline is the moment of the check plus the window.
        assert before + window <= notice.deadline <= after + window
    else:
        # The services give whole seconds.
        assert int(mtime) + window == notice.deadline
    # And back.
    _set_state(state_file, 'none')
    assert poller.check() is None


def test_poller_aws_stop_action(fake_server, state_file):
    server = fake_server(aws_action='stop')
    _set_state(state_file, 'notice')
    assert _spot.Poller('aws', base_url=server.base_url).check().action == 'stop'


def test_poller_azure_other_vm(fake_server, state_file):
    server = fake_server(azure_resources=['gpu-node-1', 'gpu-node-2'])
    _set_state(state_file, 'notice')
    assert _spot.Poller('azure', base_url=server.base_url, vm_name='gpu-node-3').check() is None
    assert _spot.Poller('azure', base_url=server.base_url, vm_name='gpu-node-2').check().action == 'preempt'


def test_poller_aws_token_is_cached(fake_server, state_file):
    server = fake_server()
    poller = _spot.Poller('aws', base_url=server.base_url)
    for _attempt in range(3):
        assert poller.check() is None
    assert server.hits[('PUT', '/latest/api/token')] == 1
    assert server.hits[('GET', '/latest/meta-data/spot/instance-action')] == 3


def test_poller_aws_token_refreshed_before_ttl(fake_server, state_file):
    server = fake_server()
    poller = _spot.Poller('aws', base_url=server.base_url)
    clock = [1000.0]
    poller._monotonic = lambda: clock[0]
    poller.check()
    clock[0] += _spot.AWS_TOKEN_TTL_SECONDS - _spot.TOKEN_REFRESH_MARGIN_SECONDS - 1
    poller.check()
    assert server.hits[('PUT', '/latest/api/token')] == 1
    clock[0] += 2                                   # now inside the refresh margin
    poller.check()
    assert server.hits[('PUT', '/latest/api/token')] == 2


def test_poller_aws_401_refreshes_the_token_once(fake_server, state_file):
    server = fake_server()
    poller = _spot.Poller('aws', base_url=server.base_url)
    assert poller.check() is None
    server.revoke_tokens()                          # e.g. the instance was stopped and started
    _set_state(state_file, 'notice')
    assert poller.check().action == 'terminate'
    assert server.hits[('PUT', '/latest/api/token')] == 2
    assert server.hits[('GET', '/latest/meta-data/spot/instance-action')] == 3   # ok, 401, ok


def test_poller_aws_token_expired_on_the_server(fake_server, state_file):
    # The server caps token lifetimes at 1 s, so the client's cached token goes stale under it.
    server = fake_server(max_token_ttl=1)
    poller = _spot.Poller('aws', base_url=server.base_url)
    assert poller.check() is None
    time.sleep(1.1)
    assert poller.check() is None
    assert server.hits[('PUT', '/latest/api/token')] == 2


def test_poller_alibaba_hardening_mode(fake_server, state_file):
    server = fake_server(alibaba_token_required=True)
    poller = _spot.Poller('alibaba', base_url=server.base_url)
    _set_state(state_file, 'notice')
    assert poller.check().action == 'terminate'     # 403, token, retry
    assert poller.check().action == 'terminate'     # token reused
    assert server.hits[('PUT', '/latest/api/token')] == 1
    assert server.hits[('GET', '/latest/meta-data/instance/spot/termination-time')] == 3


def test_poller_alibaba_normal_mode_needs_no_token(fake_server, state_file):
    server = fake_server()
    assert _spot.Poller('alibaba', base_url=server.base_url).check() is None
    assert ('PUT', '/latest/api/token') not in server.hits


@pytest.mark.parametrize('provider', _spot.PROVIDERS)
def test_poller_down(fake_server, state_file, provider):
    server = fake_server()
    _set_state(state_file, 'down')
    poller = _spot.Poller(provider, base_url=server.base_url)
    with pytest.raises(_spot.MetadataUnreachable) as info:
        poller.check()
    assert '503' in str(info.value)
    assert server.base_url in str(info.value)


def test_poller_fail_mode(fake_server, state_file):
    server = fake_server(fail=True)
    with pytest.raises(_spot.MetadataUnreachable, match='503'):
        _spot.Poller('gcp', base_url=server.base_url).check()


def test_poller_bad_state_file_is_a_server_error(fake_server, state_file):
    server = fake_server()
    _set_state(state_file, 'sideways')
    with pytest.raises(_spot.MetadataUnreachable, match='500'):
        _spot.Poller('tencent', base_url=server.base_url).check()


@pytest.mark.parametrize('provider', _spot.PROVIDERS)
def test_poller_connection_refused(provider):
    base_url = 'http://127.0.0.1:%d' % _free_port()
    with pytest.raises(_spot.MetadataUnreachable) as info:
        _spot.Poller(provider, base_url=base_url, timeout=1.0).check()
    assert base_url in str(info.value)
    assert info.value.url.startswith(base_url)
    assert 'refused' in str(info.value)


def test_poller_timeout():
    # A socket that listens but never answers: the connection is made, the answer never comes.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(('127.0.0.1', 0))
        listener.listen(5)
        base_url = 'http://127.0.0.1:%d' % listener.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(_spot.MetadataUnreachable) as info:
            _spot.Poller('gcp', base_url=base_url, timeout=0.3).check()
        assert time.monotonic() - started < 5
    assert 'timed out' in str(info.value)
    assert base_url + '/computeMetadata/v1/instance/preempted' in str(info.value)


def test_poller_dns_failure():
    with pytest.raises(_spot.MetadataUnreachable) as info:
        _spot.Poller('tencent', base_url='http://metadata.invalid', timeout=2.0).check()
    assert 'metadata.invalid' in str(info.value)


def test_poller_ignores_proxy_environment(fake_server, state_file, monkeypatch):
    server = fake_server()
    dead_proxy = 'http://127.0.0.1:%d' % _free_port()
    for name in ('http_proxy', 'HTTP_PROXY', 'all_proxy', 'ALL_PROXY'):
        monkeypatch.setenv(name, dead_proxy)
    monkeypatch.delenv('no_proxy', raising=False)
    monkeypatch.delenv('NO_PROXY', raising=False)
    _set_state(state_file, 'notice')
    assert _spot.Poller('gcp', base_url=server.base_url).check().action == 'preempt'


def test_poller_does_not_follow_redirects():
    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(302)
            self.send_header('Location', 'http://127.0.0.1:%d/elsewhere' % _free_port())
            self.send_header('Content-Length', '0')
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(('127.0.0.1', 0), Redirect)
    thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True)
    thread.start()
    try:
        with pytest.raises(_spot.MetadataUnreachable, match='unexpected HTTP status 302'):
            _spot.Poller('alibaba', base_url='http://127.0.0.1:%d' % server.server_address[1]).check()
    finally:
        server.shutdown()
        server.server_close()


def test_poller_rejects_unknown_provider():
    with pytest.raises(ValueError):
        _spot.Poller('oracle')
    with pytest.raises(ValueError):
        _spot.Poller('aws', timeout=0)


def test_poller_default_url():
    assert _spot.Poller('aws').url == 'http://169.254.169.254/latest/meta-data/spot/instance-action'
    assert _spot.Poller('azure').url == 'http://169.254.169.254/metadata/scheduledevents?api-version=2020-07-01'
    assert _spot.Poller('tencent', base_url='http://x/').url == 'http://x/latest/meta-data/spot/termination-time'


# ---------------------------------------------------------------------------------------------------------------
# Poller with a scripted opener: what goes over the wire

class ScriptedOpener(object):
    """Answers requests from a list of (status, body); records (method, url, headers, timeout)."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.requests = []

    def open(self, request, timeout=None):
        self.requests.append((request.get_method(), request.full_url, dict(request.header_items()), timeout))
        status, body = self.answers.pop(0)
        if status >= 400:
            raise urllib.error.HTTPError(request.full_url, status, 'error', email.message.Message(), io.BytesIO(body))
        return HTTPResponse(status, body)


def test_scripted_aws_wire_format():
    opener = ScriptedOpener([(200, b'TOKEN-1'), (404, b'')])
    assert _spot.Poller('aws', base_url='http://imds', timeout=1.5, opener=opener).check() is None
    (m1, u1, h1, t1), (m2, u2, h2, t2) = opener.requests
    assert (m1, u1) == ('PUT', 'http://imds/latest/api/token')
    assert h1['X-aws-ec2-metadata-token-ttl-seconds'] == '21600'
    assert (m2, u2) == ('GET', 'http://imds/latest/meta-data/spot/instance-action')
    assert h2['X-aws-ec2-metadata-token'] == 'TOKEN-1'
    assert t1 == t2 == 1.5


def test_scripted_aws_401_twice_is_unreachable():
    opener = ScriptedOpener([(200, b'T1'), (401, b''), (200, b'T2'), (401, b'')])
    with pytest.raises(_spot.MetadataUnreachable, match='401'):
        _spot.Poller('aws', base_url='http://imds', opener=opener).check()
    assert [r[0] for r in opener.requests] == ['PUT', 'GET', 'PUT', 'GET']
    assert opener.requests[3][2]['X-aws-ec2-metadata-token'] == 'T2'


def test_scripted_aws_token_refused():
    opener = ScriptedOpener([(403, b'Forbidden')])
    with pytest.raises(_spot.MetadataUnreachable) as info:
        _spot.Poller('aws', base_url='http://imds', opener=opener).check()
    assert 'http://imds/latest/api/token' in str(info.value)
    assert '403' in str(info.value)


def test_scripted_headers_gcp_azure():
    opener = ScriptedOpener([(200, b'FALSE'), (200, b'{"DocumentIncarnation": 0, "Events": []}')])
    _spot.Poller('gcp', base_url='http://md', opener=opener).check()
    _spot.Poller('azure', base_url='http://md', opener=opener).check()
    assert opener.requests[0][2]['Metadata-flavor'] == 'Google'
    assert opener.requests[1][2]['Metadata'] == 'true'
    assert opener.requests[1][1] == 'http://md/metadata/scheduledevents?api-version=2020-07-01'


def test_scripted_body_cap():
    opener = ScriptedOpener([(200, b'x' * (_spot.MAX_BODY_BYTES + 1))])
    with pytest.raises(_spot.MetadataUnreachable, match='larger than'):
        _spot.Poller('tencent', base_url='http://md', opener=opener).check()


def test_scripted_unexpected_status():
    opener = ScriptedOpener([(404, b'')])
    with pytest.raises(_spot.MetadataUnreachable, match='unexpected HTTP status 404'):
        _spot.Poller('gcp', base_url='http://md', opener=opener).check()


def test_scripted_malformed_notice():
    opener = ScriptedOpener([(200, b'T'), (200, b'<html>captive portal</html>')])
    with pytest.raises(_spot.MalformedResponse) as info:
        _spot.Poller('aws', base_url='http://imds', opener=opener).check()
    # Both kinds, so that a watcher retrying on MetadataUnreachable keeps running.
    assert isinstance(info.value, _spot.MetadataUnreachable) and isinstance(info.value, ValueError)
    assert 'http://imds/latest/meta-data/spot/instance-action' in str(info.value)
    assert 'captive portal' in str(info.value)


# ---------------------------------------------------------------------------------------------------------------
# The fake server itself: what it enforces, and its command line

def _raw(server, method, path, headers=None):
    request = urllib.request.Request(server.base_url + path, method=method, headers=headers or {},
                                     data=b'' if method == 'PUT' else None)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_fake_server_enforces_headers(fake_server, state_file):
    server = fake_server()
    assert _raw(server, 'GET', '/latest/meta-data/spot/instance-action')[0] == 401
    assert _raw(server, 'GET', '/latest/meta-data/spot/instance-action', {'X-aws-ec2-metadata-token': 'forged'})[0] == 401
    assert _raw(server, 'PUT', '/latest/api/token')[0] == 400
    assert _raw(server, 'PUT', '/latest/api/token', {'X-aws-ec2-metadata-token-ttl-seconds': '99999'})[0] == 400
    status, token = _raw(server, 'PUT', '/latest/api/token', {'X-aws-ec2-metadata-token-ttl-seconds': '60'})
    assert status == 200 and token
    assert _raw(server, 'GET', '/latest/meta-data/spot/instance-action', {'X-aws-ec2-metadata-token': token.decode()})[0] == 404
    assert _raw(server, 'GET', '/computeMetadata/v1/instance/preempted')[0] == 403
    assert _raw(server, 'GET', '/computeMetadata/v1/instance/preempted', {'Metadata-Flavor': 'Google'}) == (200, b'FALSE')
    assert _raw(server, 'GET', '/metadata/scheduledevents?api-version=2020-07-01')[0] == 400
    assert _raw(server, 'GET', '/metadata/scheduledevents', {'Metadata': 'true'})[0] == 400
    assert _raw(server, 'GET', '/metadata/scheduledevents?api-version=2020-07-01', {'Metadata': 'true'})[0] == 200
    assert _raw(server, 'GET', '/latest/meta-data/')[0] == 404
    assert _raw(server, 'GET', '/nothing/here')[0] == 404


def test_fake_server_command_line(tmp_path):
    state = tmp_path / 'state'
    proc = subprocess.Popen(
        [sys.executable, FAKE_METADATA, '--port', '0', '--state-file', str(state)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, universal_newlines=True)
    try:
        first = proc.stderr.readline()
        assert 'listening on http://127.0.0.1:' in first, first
        base_url = first.split('listening on ')[1].split()[0]
        poller = _spot.Poller('tencent', base_url=base_url)
        assert poller.check() is None
        mtime = _set_state(state, 'notice')
        assert poller.check().deadline == int(mtime) + _spot.NOTICE_WINDOW_SECONDS['tencent']
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0
    lines = [line for line in err.splitlines() if 'GET /latest/meta-data/spot/termination-time' in line]
    assert len(lines) == 2
    assert ' 404 ' in lines[0] and ' 200 ' in lines[1]


# ---------------------------------------------------------------------------------------------------------------
# Issue 29: no parser raises past its boundary. Each body below once escaped Poller.check() as another exception
# (RecursionError, OverflowError, TypeError) and ended the watcher; now it is MalformedResponse.

DEEP = b'[' * 60000


@pytest.mark.parametrize('provider, body', [
    ('aws', DEEP),
    ('azure', DEEP),
    ('azure', b'{"Events": ' + b'[' * 60000),
    ('aws', b'{"action": "terminate", "time": "2017-09-18T08:22:00Z", "x": ' + b'{"a":' * 8000 + b'1' + b'}' * 8000 + b'}'),
], ids=['aws-brackets', 'azure-brackets', 'azure-events', 'aws-nested-objects'])
def test_issue29_deep_nesting_is_malformed(provider, body):
    assert len(body) <= _spot.MAX_BODY_BYTES
    with pytest.raises(_spot.MalformedResponse, match='nests deeper than 32 levels'):
        _spot.PARSERS[provider](200, body)
    answers = [(200, b'TOKEN')] if provider == 'aws' else []
    with pytest.raises(_spot.MalformedResponse, match='nests deeper than 32 levels') as info:
        _spot.Poller(provider, base_url='http://md', opener=ScriptedOpener(answers + [(200, body)])).check()
    assert 'http://md/' in str(info.value)


@pytest.mark.parametrize('not_before', [
    'Mon, 19 Sep 99999999999 18:29:47 GMT',
    'Mon, 19 Sep 2016 18:29:47 +99999999999999999999',
    'Mon, 19 Sep 2016 18:29:99999999999999999999 GMT',
])
def test_issue29_azure_not_before_out_of_range_is_malformed(not_before):
    body = _azure_doc(_azure_event(NotBefore=not_before)).encode()
    with pytest.raises(_spot.MalformedResponse, match='not an RFC 1123 time'):
        _spot.parse_azure(200, body)
    with pytest.raises(_spot.MalformedResponse, match='not an RFC 1123 time'):
        _spot.Poller('azure', base_url='http://md', opener=ScriptedOpener([(200, body)])).check()


@pytest.mark.parametrize('fields', [
    {'EventType': ['Preempt']},
    {'EventType': {'Preempt': 1}},
    {'EventStatus': ['Scheduled']},
    {'EventType': None},
], ids=['type-list', 'type-object', 'status-list', 'type-null'])
def test_issue29_azure_event_type_of_the_wrong_type_is_malformed(fields):
    body = _azure_doc(_azure_event(**fields)).encode()
    with pytest.raises(_spot.MalformedResponse, match='EventType and EventStatus must be strings'):
        _spot.parse_azure(200, body)
    with pytest.raises(_spot.MalformedResponse, match='EventType and EventStatus must be strings'):
        _spot.Poller('azure', base_url='http://md', opener=ScriptedOpener([(200, body)])).check()


def test_azure_a_malformed_event_does_not_hide_an_eviction():
    body = _azure_doc(_azure_event(EventType=['Preempt']), 42, _azure_event(EventId='good'),
                      _azure_event(NotBefore='Mon, 19 Sep 99999999999 18:29:47 GMT'))
    notice = _spot.parse_azure(200, body)
    assert notice.action == 'preempt' and 'good' in notice.detail


@pytest.mark.parametrize('provider, body', [
    ('aws', b'{"action": "terminate", "time": "2017-09-18T08:22:00Z", "note": "\xff"}'),
    ('gcp', b'TRUE\xff'),
    ('azure', b'{"Events": [], "x": "\xc3"}'),
    ('alibaba', b'2015-01-05T18:02:00Z\xfe'),
    ('tencent', b'\x802018-08-18 12:05:33'),
])
def test_a_body_that_is_not_utf8_is_malformed(provider, body):
    with pytest.raises(_spot.MalformedResponse, match='not UTF-8 text'):
        _spot.PARSERS[provider](200, body)


@pytest.mark.parametrize('time_text', ['0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-23:59', '99999-01-01T00:00:00Z'])
def test_times_at_the_edges_of_datetime_are_a_notice_or_malformed(time_text):
    for provider, body in (('aws', json.dumps({'action': 'stop', 'time': time_text})), ('alibaba', time_text),
                           ('tencent', time_text)):
        try:
            notice = _spot.PARSERS[provider](200, body)
        except _spot.MalformedResponse:
            continue
        assert isinstance(notice.deadline, float)


def test_details_are_one_printable_line():
    notice = _spot.parse_aws(200, json.dumps({'action': 'Stop\nFAKE LOG LINE\x1b[31m', 'time': '2017-09-18T08:22:00Z'}))
    assert notice.action == 'stop?fake log line?[31m'
    assert notice.detail.isprintable()
    notice = _spot.parse_azure(200, _azure_doc(_azure_event(EventId={'nested': ['id\n']}, Resources=['a\nb'])))
    assert notice is None or notice.detail.isprintable()
    notice = _spot.parse_azure(200, _azure_doc(_azure_event(EventId='x\r\ny', Resources=['vm\u2028'])), vm_name='vm\u2028')
    assert notice.detail.isprintable()


def test_scripted_unprintable_session_token_is_malformed():
    opener = ScriptedOpener([(200, b'TOKEN\r\nX-Forged: 1')])
    with pytest.raises(_spot.MalformedResponse, match='session token is not printable ASCII'):
        _spot.Poller('aws', base_url='http://imds', opener=opener).check()
    assert len(opener.requests) == 1
