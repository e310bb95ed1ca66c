# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""No backend accepts more than was asked (issue 52), for many seeded random allow-lists with hostile spellings.

Every case that the parse accepts is rendered by Ansible itself, with the role's variables: the real nftables template,
and the arguments that the allow-list tasks of the firewall role's ufw.yml and firewalld.yml give their module for each
loop item (their loop and argument expressions are read from the task files). Each rendering is then read back by a
strict grammar (every line of the nftables file, every module argument; a bare `accept` or a `from_ip: any` that no
entry asked for fails) and evaluated for many packets: a packet is accepted exactly where the inventory asked for it
(its port and protocol, from one of the entry's sources, on one of its interfaces, or on a trusted interface). The
oracle reads the raw inventory with the standard library, not with plugins/module_utils/_firewall.py.

Negative control: the same checks over the earlier code's output (its Jinja SSH merge, which compared the port with
`equalto` against an integer, and its entry builder, which wrote the port as given and read any source) flag the
reproductions of the issue: port "9100\\n", sources [""] and SSH port "22" with sources.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ipaddress
import json
import random
import re

import pytest
import yaml

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _firewall
from ansible_collections.gpuops.gpu_server.tests.support.playbook import ROOT

SSH_PORT = 22
CASES = 40  # per seed; every one rendered by Ansible (about 0.5 s each on 2 cores)
TASKS = ROOT + '/roles/firewall/tasks/%s.yml'
TEMPLATE = ROOT + '/roles/firewall/templates/nftables.conf.j2'
IFACE = r'[A-Za-z0-9_.-]{1,15}'


# The cases -------------------------------------------------------------------------------------------------------------

def _port_spelling(rng, port):
    good = [port, str(port), '0' + str(port)]
    bad = [str(port) + '\n', ' %d' % port, '+%d' % port, '%d_0' % port, float(port), True, '', None,
           ''.join(chr(0x660 + int(d)) for d in str(port)), '%d accept' % port, -port, 70000]
    return rng.choice(good if rng.random() < 0.85 else bad)


def _source(rng):
    if rng.random() < 0.08:
        return rng.choice(['', ' ', None, '10.0.0.1 } accept #', '10.0.0.0/8\n', 'any', '10.0.0.1 ', 'fe80::1%eth0', 5])
    if rng.random() < 0.3:
        net = ipaddress.IPv6Network((rng.getrandbits(128) & ~((1 << 112) - 1) | rng.getrandbits(16),
                                     rng.choice([128, 64, 112, 120])), strict=False)
        address = net.network_address + rng.getrandbits(8) if net.prefixlen < 128 else net.network_address
        return '%s/%d' % (address, net.prefixlen) if rng.random() < 0.7 else str(address)
    address = ipaddress.IPv4Address(rng.choice([0x0A000000, 0xAC100000, 0xC0A80000]) | rng.getrandbits(16))
    prefix = rng.choice([32, 32, 24, 28, 16, 8])
    spelled = rng.choice(['%s/%d' % (address, prefix), str(ipaddress.IPv4Network((address, prefix), strict=False))])
    return str(address) if prefix == 32 and rng.random() < 0.5 else spelled


def _interface(rng):
    if rng.random() < 0.08:
        return rng.choice(['', 'eth 0', 'ib0"', 'ib0\n', 'x' * 16, '..', None])
    return rng.choice(['ib0', 'ib1', 'eth1', 'bond0.100', 'br-x'])


def _entry(rng, interfaces=True):
    port = rng.choice([SSH_PORT, SSH_PORT, 80, 8080, 9100, 29500, rng.randint(1, 65000)])
    entry = {'port': _port_spelling(rng, port)}
    if rng.random() < 0.25:
        entry['port_end'] = _port_spelling(rng, port + rng.randint(0, 99))
    if rng.random() < 0.7:
        entry['proto'] = rng.choice(['tcp', 'tcp', 'udp'] + (['TCP'] if rng.random() < 0.1 else []))
    if rng.random() < 0.75:
        entry['sources'] = [_source(rng) for dummy in range(rng.randint(0, 3))]
    if interfaces and rng.random() < 0.3:
        entry['interfaces'] = [_interface(rng) for dummy in range(rng.randint(0, 2))]
    return entry


def _case(rng, interfaces=True):
    lists = {name: [_entry(rng, interfaces) for dummy in range(rng.randint(0, 3))] for name in (
        'hardening_firewall_allowed_ports', 'hardening_firewall_extra_ports', 'hardening_firewall_service_ports')}
    trusted = [_interface(rng) for dummy in range(rng.randint(0, 1))] if interfaces else []
    return dict(lists, hardening_firewall_trusted_interfaces=trusted)


def _accepted(case):
    return not _firewall.allow_list({k: v for k, v in case.items() if k.endswith('_ports')}, SSH_PORT,
                                    case['hardening_firewall_trusted_interfaces'])['errors']


def cases(seed, count, interfaces=True):
    """COUNT accepted cases of seed SEED, and how many were refused on the way."""
    rng, got, refused = random.Random(seed), [], 0
    while len(got) < count:
        case = _case(rng, interfaces)
        if _accepted(case):
            got.append(case)
        else:
            refused += 1
    return got, refused


# The oracle: what the inventory asked for, read without _firewall ------------------------------------------------------

def _int(value):
    return int(str(value), 10)


def asked(case):
    """A function (iface, address, proto, port) -> whether some entry asks for that packet."""
    ssh, others = [], []
    for name in ('hardening_firewall_allowed_ports', 'hardening_firewall_extra_ports', 'hardening_firewall_service_ports'):
        for raw in case[name]:
            first = _int(raw['port'])
            last = first if raw.get('port_end') is None else _int(raw['port_end'])
            entry = (first, last, raw.get('proto') or 'tcp',
                     [ipaddress.ip_network(s, strict=False) for s in raw.get('sources', [])], raw.get('interfaces', []))
            (ssh if (first, last, entry[2]) == (SSH_PORT, SSH_PORT, 'tcp') else others).append(entry)
    # The SSH port is always allowed; the entries for it narrow it to their sources and interfaces, together.
    others.insert(0, (SSH_PORT, SSH_PORT, 'tcp', [n for e in ssh for n in e[3]], [i for e in ssh for i in e[4]]))
    trusted = case['hardening_firewall_trusted_interfaces']

    def check(iface, address, proto, port):
        if iface in trusted:
            return True

        def source_ok(nets):
            return not nets or any(n.version == address.version and address in n for n in nets)
        return any(first <= port <= last and proto == p and source_ok(nets) and (not ifaces or iface in ifaces)
                   for first, last, p, nets, ifaces in others)
    return check


def packets(case, rng):
    """Packets around every entry's edges: its ports and their neighbours, addresses in and just outside each source,
    random addresses of both families, each listed interface and one never listed."""
    ports, addresses, ifaces = {1, 65535, SSH_PORT, SSH_PORT + 1}, set(), {'eth9'}
    for name in ('hardening_firewall_allowed_ports', 'hardening_firewall_extra_ports', 'hardening_firewall_service_ports'):
        for raw in case[name]:
            first = _int(raw['port'])
            last = first if raw.get('port_end') is None else _int(raw['port_end'])
            ports |= {p for p in (first - 1, first, last, last + 1, rng.randint(first, last)) if 1 <= p <= 65535}
            for s in raw.get('sources', []):
                net = ipaddress.ip_network(s, strict=False)
                for a in (int(net.network_address) - 1, int(net.network_address), int(net.broadcast_address),
                          int(net.broadcast_address) + 1):
                    if 0 <= a < (1 << net.max_prefixlen):
                        addresses.add(ipaddress.IPv6Address(a) if net.version == 6 else ipaddress.IPv4Address(a))
            ifaces |= set(raw.get('interfaces', []))
    ifaces |= set(case['hardening_firewall_trusted_interfaces'])
    addresses |= {ipaddress.IPv4Address(rng.getrandbits(32)), ipaddress.IPv6Address(rng.getrandbits(128)),
                  ipaddress.IPv4Address('203.0.113.9'), ipaddress.IPv6Address('2001:db8::9')}
    for iface in sorted(ifaces):
        for address in sorted(addresses, key=lambda a: (a.version, int(a))):
            for port in sorted(ports):
                for proto in ('tcp', 'udp'):
                    yield iface, address, proto, port


# Strict readers of each backend's rendering ----------------------------------------------------------------------------

FIXED_CHAIN_LINES = {
    'type filter hook input priority filter; policy drop;', 'ct state established,related accept',
    'ct state invalid drop', 'iif "lo" accept',
    'icmpv6 type { destination-unreachable, packet-too-big, time-exceeded, parameter-problem, nd-router-advert, '
    'nd-neighbor-solicit, nd-neighbor-advert } accept',
    'icmp type { destination-unreachable, time-exceeded, parameter-problem } accept',
    'icmp type echo-request limit rate 10/second accept', 'icmpv6 type echo-request limit rate 10/second accept',
    'limit rate 5/minute log prefix "gpuops-drop: " level info',
}
NFT_RULE = re.compile(r'(?:iifname \{ (?P<ifaces>"%s"(?:, "%s")*) \} )?(?:(?P<family>ip|ip6) saddr \{ (?P<nets>[0-9a-f.:/]+'
                      r'(?:, [0-9a-f.:/]+)*) \} )?(?P<proto>tcp|udp) dport (?P<first>[1-9][0-9]{0,4})(?:-(?P<last>[1-9][0-9]{0,4}))? '
                      r'accept' % (IFACE, IFACE))
NFT_TRUSTED = re.compile(r'iifname "(%s)" accept' % IFACE)


def _network(text, version=None):
    """TEXT as a network in its normalised form only (strict: no host bits), of VERSION where given."""
    net = ipaddress.ip_network(text, strict=True)
    assert text in (net.compressed, str(net.network_address)) and (version is None or net.version == version), text
    return net


def _range(first, last):
    first, last = int(first), int(last or first)
    assert 1 <= first <= last <= 65535, (first, last)
    return first, last


def nft_rules(text):
    """The nftables file read by a strict grammar: (trusted interfaces, rules), each rule (interfaces, nets, family,
    proto, first, last). Any line outside the grammar fails."""
    lines = [ln.strip() for ln in text.splitlines()]
    head, chain, tail = lines[:lines.index('chain input {')], [], []
    rest = lines[len(head) + 1:]
    chain, tail = rest[:rest.index('}')], rest[rest.index('}') + 1:]
    assert [ln for ln in head if ln and not ln.startswith('#')] == [
        'table inet gpuops_filter', 'delete table inet gpuops_filter', 'table inet gpuops_filter {'], head
    assert [ln for ln in tail if ln] == ['}'], tail
    trusted, rules = [], []
    for line in chain:
        if line in FIXED_CHAIN_LINES:
            continue
        m = NFT_TRUSTED.fullmatch(line)
        if m:
            trusted.append(m.group(1))
            continue
        m = NFT_RULE.fullmatch(line)
        assert m, 'a line outside the grammar of the input chain: %r' % line
        version = {'ip': 4, 'ip6': 6, None: None}[m.group('family')]
        nets = [_network(n, version) for n in m.group('nets').split(', ')] if m.group('nets') else []
        ifaces = re.findall(r'"(%s)"' % IFACE, m.group('ifaces') or '')
        rules.append((ifaces, nets, version, m.group('proto')) + _range(m.group('first'), m.group('last')))
    return trusted, rules


def nft_accepts(text):
    trusted, rules = nft_rules(text)

    def check(iface, address, proto, port):
        if iface in trusted:
            return True
        return any((not ifaces or iface in ifaces) and (version is None or version == address.version)
                   and (not nets or any(address in n for n in nets)) and p == proto and first <= port <= last
                   for ifaces, nets, version, p, first, last in rules)
    return check


def ufw_accepts(rendered):
    """The ufw module's arguments per loop item, read strictly: rule allow, port N or N:M, proto, from_ip any or a
    normalised network, interface with direction in, or neither."""
    rules, trusted = [], []
    for args in rendered['allow']:
        assert set(args) == {'rule', 'port', 'proto', 'from_ip', 'interface', 'direction', 'comment'}, args
        assert args['rule'] == 'allow' and args['comment'] == 'gpuops.gpu_server.hardening', args
        m = re.fullmatch(r'([1-9][0-9]{0,4})(?::([1-9][0-9]{0,4}))?', args['port'])
        assert m and args['proto'] in ('tcp', 'udp'), args
        source = None if args['from_ip'] == 'any' else _network(args['from_ip'])
        if args['interface'] == '__omit__':
            assert args['direction'] == '__omit__', args
            iface = None
        else:
            assert re.fullmatch(IFACE, args['interface']) and args['direction'] == 'in', args
            iface = args['interface']
        rules.append((iface, source, args['proto']) + _range(m.group(1), m.group(2)))
    for args in rendered['trusted']:
        assert args == {'rule': 'allow', 'interface': args['interface'], 'direction': 'in'}, args
        assert re.fullmatch(IFACE, args['interface']), args
        trusted.append(args['interface'])

    def check(iface, address, proto, port):
        def source_ok(s):
            return s is None or (s.version == address.version and address in s)
        return iface in trusted or any((i is None or i == iface) and source_ok(s) and p == proto and first <= port <= last
                                       for i, s, p, first, last in rules)
    return check


RICH = re.compile(r'rule family="(ipv4|ipv6)" source address="([0-9a-f.:/]+)" port port="([1-9][0-9]{0,4})(?:-([1-9][0-9]{0,4}))?" '
                  r'protocol="(tcp|udp)" accept')


def firewalld_accepts(rendered):
    """firewalld's arguments per loop item: zone-wide ports (from anywhere) and rich rules, read strictly."""
    rules, trusted = [], []
    for args in rendered['ports']:
        assert set(args) == {'port', 'permanent', 'immediate', 'state'} and args['state'] == 'enabled', args
        m = re.fullmatch(r'([1-9][0-9]{0,4})(?:-([1-9][0-9]{0,4}))?/(tcp|udp)', args['port'])
        assert m, args
        rules.append((None, m.group(3)) + _range(m.group(1), m.group(2)))
    for args in rendered['rich']:
        assert set(args) == {'rich_rule', 'permanent', 'immediate', 'state'} and args['state'] == 'enabled', args
        m = RICH.fullmatch(args['rich_rule'])
        assert m, args
        rules.append((_network(m.group(2), 4 if m.group(1) == 'ipv4' else 6), m.group(5)) + _range(m.group(3), m.group(4)))
    for args in rendered['trusted']:
        assert args['zone'] == 'trusted' and re.fullmatch(IFACE, args['interface']), args
        trusted.append(args['interface'])

    def check(iface, address, proto, port):
        return iface in trusted or any((s is None or (s.version == address.version and address in s))
                                       and p == proto and first <= port <= last for s, p, first, last in rules)
    return check


def mismatches(case, accepts, seed):
    """The packets where the backend and the oracle differ (more than asked, or less), at most 5."""
    want, rng, out = asked(case), random.Random(seed), []
    for packet in packets(case, rng):
        if accepts(*packet) != want(*packet):
            out.append((accepts(*packet), packet))
            if len(out) == 5:
                break
    return out


# Rendering with Ansible ------------------------------------------------------------------------------------------------

def _expression(value):
    """A task argument (a string with {{ }} parts, or a plain value) as one Jinja expression; `omit` as '__omit__'."""
    if not isinstance(value, str):
        return json.dumps(value)
    parts = re.split(r'{{(.*?)}}', value.strip(), flags=re.S)
    out = []
    for index, part in enumerate(parts):
        if index % 2:
            out.append('(%s)' % re.sub(r'\bomit\b', "'__omit__'", part.strip()))
        elif part:
            quote = "'" if "'" not in part else '"'
            assert quote not in part and '\\' not in part, part  # a Jinja literal without escapes
            out.append(quote + part + quote)
    return ' ~ '.join(out) if len(out) > 1 else out[0]


def _loop_of(task):
    module = [k for k in task if '.' in k and k not in ('loop_control',)][0]
    return _expression(task['loop']), task[module]


def task_expression(backend, name_fragment):
    """The Jinja expression that gives the module arguments of each loop item of the task of BACKEND's file whose
    name holds NAME_FRAGMENT."""
    with open(TASKS % backend) as f:
        task = [t for t in yaml.safe_load(f) if name_fragment in t['name']][0]
    loop, args = _loop_of(task)
    body = '{' + ', '.join('%s: %s' % (json.dumps(k), _expression(v)) for k, v in sorted(args.items())) + '}'
    return '{%% for item in %s %%}{{ (%s) | to_json }}\n{%% endfor %%}' % (loop, body)


PLAYBOOK = '''
- hosts: localhost
  gather_facts: false
  vars_files:
    - "%(root)s/roles/firewall/defaults/main.yml"
    - "%(root)s/roles/firewall/vars/main.yml"
  tasks:
    - name: Render each case
      ansible.builtin.debug:
        msg:
          nft: "{{ lookup('ansible.builtin.template', '%(template)s') }}"
          ufw_allow: %(ufw_allow)s
          ufw_trusted: %(ufw_trusted)s
          firewalld_ports: %(firewalld_ports)s
          firewalld_rich: %(firewalld_rich)s
          firewalld_trusted: %(firewalld_trusted)s
      loop: "{{ cases }}"
      loop_control:
        label: case
      vars:
        # The inventory's hardening_* lists, mapped onto the firewall role's options as the hardening role maps them.
        firewall_allowed_ports: "{{ item.hardening_firewall_allowed_ports }}"
        firewall_extra_ports: "{{ item.hardening_firewall_extra_ports }}"
        firewall_service_ports: "{{ item.hardening_firewall_service_ports }}"
        firewall_trusted_interfaces: "{{ item.hardening_firewall_trusted_interfaces }}"
        firewall_allow_ping: "{{ item.ping | default(true) }}"
        # The negative control replaces the typed lists with the earlier code's output.
%(override)s
      register: __rendered
    - ansible.builtin.copy:
        dest: "%(out)s"
        content: "{{ __rendered.results | map(attribute='msg') | list | to_json }}"
'''

OVERRIDE = '''        _firewall_entries: "{{ item.naive_entries }}"
        _firewall_rules: "{{ item.naive_rules }}"
        _firewall_trusted_interfaces: "{{ item.hardening_firewall_trusted_interfaces }}"'''


TASKS_READ = {
    'ufw_allow': ('ufw', 'Allow the SSH port and the allow-list'), 'ufw_trusted': ('ufw', 'trusted interfaces'),
    'firewalld_ports': ('firewalld', 'allow-list from anywhere'), 'firewalld_rich': ('firewalld', 'rich rules'),
    'firewalld_trusted': ('firewalld', 'Trust the listed interfaces'),
}


def render_all(ansible_play, the_cases, naive=False):
    """Every case rendered by Ansible in one run: the nftables file and each backend's module arguments per item."""
    # The tasks' own loop variable is `item`, which is the case in this playbook's loop: rename it in the expressions.
    fields = {key: json.dumps(re.sub(r'\bitem\b', 'rule', task_expression(*where))) for key, where in TASKS_READ.items()}
    proc, got = ansible_play(PLAYBOOK, {'cases': the_cases}, root=ROOT, template=TEMPLATE,
                             override=OVERRIDE if naive else '', **fields)
    assert proc.returncode == 0, proc.stdout[-6000:]
    out = []
    for msg in got:
        def lines(key):
            return [json.loads(ln) for ln in (msg[key] or '').splitlines() if ln.strip()]
        out.append({'nft': msg['nft'], 'ufw': {'allow': lines('ufw_allow'), 'trusted': lines('ufw_trusted')},
                    'firewalld': {'ports': lines('firewalld_ports'), 'rich': lines('firewalld_rich'),
                                  'trusted': lines('firewalld_trusted')}})
    return out


def violations(case, rendered, backends, seed):
    """What the checker finds per backend: a grammar failure or the packets where it differs from the oracle."""
    found = {}
    for backend in backends:
        try:
            accepts = {'nftables': lambda: nft_accepts(rendered['nft']), 'ufw': lambda: ufw_accepts(rendered['ufw']),
                       'firewalld': lambda: firewalld_accepts(rendered['firewalld'])}[backend]()
            wrong = mismatches(case, accepts, seed)
        except AssertionError as e:
            wrong = ['grammar: %s' % e]
        if wrong:
            found[backend] = wrong
    return found


# The property ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('seed,interfaces,backends', [
    (52, True, ('nftables', 'ufw')),
    # firewalld's preflight refuses per-interface entries (a zone owns an interface there): none in its cases.
    (53, False, ('nftables', 'ufw', 'firewalld')),
])
def test_no_backend_accepts_more_or_less_than_asked(ansible_play, seed, interfaces, backends):
    the_cases, refused = cases(seed, CASES, interfaces)
    assert refused > CASES // 4  # the generator does produce hostile spellings, which the parse refuses
    for index, case in enumerate(the_cases):
        case['ping'] = bool(index % 2)
    rendered = render_all(ansible_play, the_cases)
    assert len(rendered) == len(the_cases)
    bad = {}
    for index, (case, got) in enumerate(zip(the_cases, rendered)):
        found = violations(case, got, backends, seed + index)
        if found:
            bad[index] = (case, found)
    assert not bad, json.dumps({k: [v[0], {b: [str(x) for x in w] for b, w in v[1].items()}]
                                for k, v in list(bad.items())[:3]}, indent=1, default=str)
    # The checks are not vacuous: rules with sources, ranges, interfaces and both families were rendered.
    text = '\n'.join(r['nft'] for r in rendered)
    assert 'ip saddr {' in text and 'ip6 saddr {' in text and re.search(r'dport \d+-\d+', text)
    if interfaces:
        assert 'iifname {' in text


# Negative control: the earlier code ------------------------------------------------------------------------------------

def _old_as_int(value):
    try:
        return int(value, 10) if isinstance(value, str) else int(value)
    except (TypeError, ValueError, OverflowError):
        try:
            return int(float(value))
        except (TypeError, ValueError, OverflowError):
            return 0


def _old_entry(item):
    """The earlier _firewall.entry: the range read as Jinja's int reads it, nft_dport the text as given, sources as
    given."""
    first = _old_as_int(item.get('port'))
    has_end = item.get('port_end') is not None
    last = _old_as_int(item['port_end']) if has_end else first
    sources, interfaces = list(item.get('sources') or []), list(item.get('interfaces') or [])
    ufw, firewalld = ('%d:%d' % (first, last), '%d-%d' % (first, last)) if last != first else ('%d' % first,) * 2
    return {'port': first, 'port_end': last, 'proto': item.get('proto', 'tcp'), 'sources': sources,
            'interfaces': interfaces, 'ports_ufw': ufw, 'ports_firewalld': firewalld,
            'sources_v4': [s for s in sources if ':' not in str(s)], 'sources_v6': [s for s in sources if ':' in str(s)],
            'nft_dport': '%s' % (item.get('port'),) + ('-%s' % (item['port_end'],) if has_end and last != first else ''),
            'nft_iifname': 'iifname { "%s" } ' % '", "'.join(interfaces) if interfaces else ''}


def _old_lists(case):
    """The earlier vars/main.yml: the SSH merge with `equalto` against the integer port, then the entry builder."""
    requested = (case['hardening_firewall_allowed_ports'] + case['hardening_firewall_extra_ports']
                 + case['hardening_firewall_service_ports'])
    merged = [{'port': SSH_PORT, 'proto': 'tcp',
               'sources': list(dict.fromkeys(s for e in requested if e.get('port') == SSH_PORT
                                             for s in e.get('sources', [])))}]
    ports = merged + [e for e in requested if e.get('port') != SSH_PORT]
    entries = [_old_entry(e) for e in ports]
    rules = [{'port': e['port'], 'port_end': e['port_end'], 'proto': e['proto'], 'source': s or '',
              'family': 'ipv6' if ':' in str(s) else 'ipv4', 'interface': i, 'ports_ufw': e['ports_ufw'],
              'ports_firewalld': e['ports_firewalld']}
             for e in entries for s in e['sources'] or [''] for i in e['interfaces'] or ['']]
    return entries, rules


REPRODUCTIONS = [
    # issue 52 item 1: SSH restricted with port "22" -> a second rule for 22 from anywhere.
    ({'hardening_firewall_allowed_ports': [{'port': '22', 'proto': 'tcp', 'sources': ['10.0.0.0/8']}]},
     ('nftables', 'ufw', 'firewalld')),
    # item 2: a trailing newline -> a bare `accept` line in the input chain.
    ({'hardening_firewall_extra_ports': [{'port': '9100\n', 'sources': ['10.0.0.5']}]}, ('nftables',)),
    # item 3: an empty source -> from anywhere on ufw and firewalld.
    ({'hardening_firewall_extra_ports': [{'port': 9100, 'sources': ['']}]}, ('ufw', 'firewalld')),
]


def test_the_checker_flags_the_earlier_code_on_each_reproduction(ansible_play):
    the_cases = []
    for lists, dummy in REPRODUCTIONS:
        case = {'hardening_firewall_allowed_ports': [{'port': 22, 'proto': 'tcp', 'sources': []}],
                'hardening_firewall_extra_ports': [], 'hardening_firewall_service_ports': [],
                'hardening_firewall_trusted_interfaces': []}
        case.update(lists)
        assert _accepted(case) == (len(the_cases) == 0)  # the parse accepts the first now, refuses the others
        case['naive_entries'], case['naive_rules'] = _old_lists(case)
        the_cases.append(case)
    rendered = render_all(ansible_play, the_cases, naive=True)
    for (lists, backends), case, got in zip(REPRODUCTIONS, the_cases, rendered):
        # The oracle reads "9100\n" as 9100 and "" as no address: what was asked is clear; the earlier code gave more.
        oracle_case = json.loads(json.dumps(case))
        for entry in oracle_case['hardening_firewall_extra_ports']:
            entry['sources'] = [s for s in entry['sources'] if s]
            entry['sources'] = entry['sources'] or ['192.0.2.255/32']  # asked: from nowhere but this one address
        found = violations(oracle_case, got, backends, 0)
        assert set(found) == set(backends), (lists, found)
    # The reproduction of item 1 is accepted now, and rendered with one SSH rule from its source on every backend.
    now = render_all(ansible_play, the_cases[:1])[0]
    assert violations(the_cases[0], now, ('nftables', 'ufw', 'firewalld'), 0) == {}
    assert [ln.strip() for ln in now['nft'].splitlines() if 'dport 22 ' in ln] == ['ip saddr { 10.0.0.0/8 } tcp dport 22 accept']
