# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The firewall allow-list: parsed once into typed values, then written for each backend from those values only.

An entry is a dict with these keys and no others: port (the port, or the first port of a range), port_end (the range's
last port; missing or None = port alone), proto (tcp or udp; missing or None = tcp), sources (IP addresses or networks,
IPv4 or IPv6; missing or [] = anywhere) and interfaces (inbound interfaces; missing or [] = any).

``parse_entry`` turns one entry into typed values or raises ``FirewallError`` naming the variable, the entry and the
field: a port is a Python int 1-65535 (a string only where it is ASCII digits and nothing else: "22" is 22, while
"9100\\n", " 22", "+22", "2_2", "22.0", Arabic-Indic digits, booleans and floats are refused); a source is an address or
network read by ``ipaddress`` and written in its compressed form, host bits cleared (10.0.0.1/8 is 10.0.0.0/8, a
/32 or /128 the address alone); an empty, blank, null or non-address source is refused (never read as "anywhere");
an interface is a Linux interface name (1-15 of A-Z a-z 0-9 _ . -, not "." or "..").

``allow_list`` parses every list a role hands over (each named by its variable), merges the entries for the SSH port
into one SSH entry, first, and returns the entries, the trusted interfaces and every error. ``entries`` (nftables: one
rule per entry and family) and ``rules`` (ufw and firewalld: one rule per source and interface) render from that
typed result only and refuse one that holds errors, so nothing is written from an allow-list the preflight would
refuse. ``member_entries`` builds the entries a cluster role publishes: its ports, from the other members' addresses
(and the role's extra sources), or from anyone on its interfaces.

Used by the filters of plugins/filter/firewall.py on the control node. Standard library only. Private to this
collection: no compatibility promise to other collections (a firewall role may own it later; nothing here knows the
hardening role but the variable names its callers pass in).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ipaddress
import re

from collections.abc import Mapping

from ansible_collections.gpuops.gpu_server.plugins.module_utils import _host_port

MIN_PORT = _host_port.MIN_PORT
MAX_PORT = _host_port.MAX_PORT
PROTOCOLS = ('tcp', 'udp')
KEYS = ('port', 'port_end', 'proto', 'sources', 'interfaces')

_ADDRESS_CHARACTERS = re.compile(r'[0-9A-Fa-f.:/]{1,64}')  # no space, zone (%eth0), line break or other text
_INTERFACE = re.compile(r'[A-Za-z0-9_.-]{1,15}')  # IFNAMSIZ is 16 with the NUL


class FirewallError(ValueError):
    """A value of the allow-list that cannot be written; the message names where it is and how to fix it."""


def _show(value):
    """A value as the message shows it: repr, so that line breaks, spaces and quotes are visible."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + '...'


def parse_port(value, where):
    """VALUE as a port number: an int 1-65535, or a string of ASCII digits only (_host_port.parse_port, the one port
    parser). WHERE names it in the error."""
    try:
        return _host_port.parse_port(value, example=22)
    except _host_port.HostPortError as e:
        raise FirewallError('%s: %s' % (where, e))


def parse_proto(value, where):
    """VALUE as a protocol: tcp or udp; None is tcp (the default)."""
    if value is None:
        return 'tcp'
    if not isinstance(value, str) or value not in PROTOCOLS:
        raise FirewallError('%s: %s is not a protocol: write tcp or udp' % (where, _show(value)))
    return value


def parse_source(value, where):
    """VALUE as an address or network in its compressed form, host bits cleared; a full-length prefix (/32, /128)
    is written as the address alone."""
    if not isinstance(value, str) or not _ADDRESS_CHARACTERS.fullmatch(value):
        raise FirewallError('%s: %s is not an IP address or network: write one such as 10.0.0.5, 10.0.0.0/8 or '
                            'fd00::/64 (leave sources empty for anywhere)' % (where, _show(value)))
    try:
        network = ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise FirewallError('%s: %s is not an IP address or network: write one such as 10.0.0.5, 10.0.0.0/8 or '
                            'fd00::/64 (leave sources empty for anywhere)' % (where, _show(value)))
    if network.prefixlen == network.max_prefixlen:
        return network.network_address.compressed
    return network.compressed


def parse_interface(value, where):
    """VALUE as a Linux interface name: 1-15 of A-Z a-z 0-9 _ . -, not "." or ".."."""
    if not isinstance(value, str) or not _INTERFACE.fullmatch(value) or value in ('.', '..'):
        raise FirewallError('%s: %s is not an interface name: write one such as eth1, ib0 or bond0.100 (1-15 '
                            'letters, digits, _ . -)' % (where, _show(value)))
    return value


def _list(value, where, field):
    """A list field: [] where it is missing; None and anything but a list are refused (None would read as "any",
    a string one character at a time)."""
    if isinstance(value, (list, tuple)):
        return list(value)
    raise FirewallError('%s: %s must be a list, got %s: leave it out or write [] for %s' % (
        where, field, _show(value), 'anywhere' if field == 'sources' else 'any interface'))


def _unique(values):
    out = []
    for value in values:
        if value not in out:
            out.append(value)
    return out


def parse_entry(item, where):
    """ITEM (one entry) as typed values: {port, port_end, proto, sources, interfaces}; WHERE (such as
    hardening_firewall_allowed_ports[0]) starts every error."""
    if not isinstance(item, Mapping):
        raise FirewallError('%s: %s is not an entry: write a dict such as {port: 22, proto: tcp, sources: '
                            '[10.0.0.0/8]}' % (where, _show(item)))
    unknown = sorted(str(key) for key in item if key not in KEYS)
    if unknown:
        raise FirewallError('%s: unknown key %s: an entry has port, port_end, proto, sources and interfaces only'
                            % (where, ', '.join(unknown)))
    if 'port' not in item:
        raise FirewallError('%s: no port: every entry needs one (1-65535)' % where)
    port = parse_port(item['port'], where + '.port')
    port_end = port if item.get('port_end') is None else parse_port(item['port_end'], where + '.port_end')
    if port_end < port:
        raise FirewallError('%s.port_end: %d is below port %d: a range runs from port up to port_end'
                            % (where, port_end, port))
    sources = _list(item.get('sources', []), where, 'sources')
    interfaces = _list(item.get('interfaces', []), where, 'interfaces')
    return {
        'port': port, 'port_end': port_end, 'proto': parse_proto(item.get('proto'), where + '.proto'),
        'sources': _unique(parse_source(s, '%s.sources[%d]' % (where, i)) for i, s in enumerate(sources)),
        'interfaces': _unique(parse_interface(n, '%s.interfaces[%d]' % (where, i)) for i, n in enumerate(interfaces)),
    }


def parse_list(items, name):
    """Every entry of the list variable NAME: (typed entries, errors). A missing list (None) is empty."""
    if items is None:
        return [], []
    if not isinstance(items, (list, tuple)):
        return [], ['%s: %s must be a list of entries' % (name, _show(items))]
    typed, errors = [], []
    for index, item in enumerate(items):
        try:
            typed.append(parse_entry(item, '%s[%d]' % (name, index)))
        except FirewallError as e:
            errors.append(str(e))
    return typed, errors


def allow_list(lists, ssh_port=None, trusted_interfaces=None, ssh_port_name='the SSH port',
               trusted_interfaces_name='trusted_interfaces'):
    """The whole allow-list, parsed once.

    LISTS: variable name -> its list of entries, in the order the firewall writes them. SSH_PORT (None = no SSH
    entry): the entries for it (tcp, a single port, whatever spelling) are merged into one entry, first, whose sources
    and interfaces are the union of theirs (an entry without sources adds none, so the default "22 from anywhere" is
    narrowed by any entry that names sources; none at all = anywhere). TRUSTED_INTERFACES: interfaces accepted as a
    whole.

    Returns {'entries': typed entries, 'trusted_interfaces': names, 'errors': messages}. An entry or a name with an
    error is left out of the result; a caller must refuse the result while it has errors (``entries`` and ``rules``
    do).
    """
    errors, typed = [], []
    if not isinstance(lists, Mapping):
        raise FirewallError('expected the allow-list variables as a dict (name -> list), got %s' % _show(lists))
    for name, items in lists.items():
        got, bad = parse_list(items, str(name))
        typed += got
        errors += bad
    trusted = []
    if trusted_interfaces is not None and not isinstance(trusted_interfaces, (list, tuple)):
        errors.append('%s: %s must be a list of interface names' % (trusted_interfaces_name, _show(trusted_interfaces)))
    else:
        for index, value in enumerate(trusted_interfaces or []):
            try:
                trusted.append(parse_interface(value, '%s[%d]' % (trusted_interfaces_name, index)))
            except FirewallError as e:
                errors.append(str(e))
    if ssh_port is not None:
        try:
            ssh = parse_port(ssh_port, ssh_port_name)
        except FirewallError as e:
            errors.append(str(e))
        else:
            merged = [e for e in typed if e['port'] == ssh and e['port_end'] == ssh and e['proto'] == 'tcp']
            typed = [{'port': ssh, 'port_end': ssh, 'proto': 'tcp',
                      'sources': _unique(s for e in merged for s in e['sources']),
                      'interfaces': _unique(n for e in merged for n in e['interfaces'])}] + [
                e for e in typed if not any(e is m for m in merged)]
    return {'entries': typed, 'trusted_interfaces': _unique(trusted), 'errors': errors}


def _typed(value):
    """The typed entries of an allow_list result (refused while it has errors), or of a plain list of entries
    (parsed here, the first error raised)."""
    if isinstance(value, Mapping):
        if value.get('errors'):
            raise FirewallError('the allow-list has errors, nothing is written: ' + '; '.join(value['errors']))
        items, name = value.get('entries'), 'entries'
    else:
        items, name = value, 'entry'
    if items is None:
        return []
    if not isinstance(items, (list, tuple)):
        raise FirewallError('expected a list of firewall entries, got %s' % _show(items))
    # Typed entries pass again unchanged (parsing is idempotent); anything else is parsed or refused here.
    return [parse_entry(item, '%s[%d]' % (name, index)) for index, item in enumerate(items)]


def _ports(entry):
    first, last = entry['port'], entry['port_end']
    if first == last:
        return '%d' % first, '%d' % first, '%d' % first
    return '%d:%d' % (first, last), '%d-%d' % (first, last), '%d-%d' % (first, last)


def _family(source):
    return 'ipv6' if ipaddress.ip_network(source).version == 6 else 'ipv4'


def entries(value):
    """One dict per typed entry, in order, with what an nftables rule needs: port, port_end, proto, sources,
    interfaces; ports_ufw, ports_firewalld, nft_dport (the port or range as each writes it, from the integers);
    sources_v4, sources_v6 (the normalised networks by family); nft_iifname (``iifname { "ib0", "eth1" } ``, '' for
    any interface)."""
    out = []
    for e in _typed(value):
        ufw, firewalld, nft = _ports(e)
        out.append(dict(e, range_ok=True, ports_ufw=ufw, ports_firewalld=firewalld, nft_dport=nft,
                        sources_v4=[s for s in e['sources'] if _family(s) == 'ipv4'],
                        sources_v6=[s for s in e['sources'] if _family(s) == 'ipv6'],
                        nft_iifname=('iifname { %s } ' % ', '.join('"%s"' % n for n in e['interfaces'])
                                     if e['interfaces'] else '')))
    return out


def rules(value):
    """The allow-list as one rule per entry, source and interface, in order (sources outer, interfaces inner), for
    the backends that take one rule at a time (ufw, firewalld). Each rule: port, port_end, proto, source ('' =
    anywhere, only where the entry lists no sources), family (ipv4, ipv6; '' with no source), interface ('' = any),
    range_ok, ports_ufw, ports_firewalld."""
    out = []
    for e in entries(value):
        for source in e['sources'] or ['']:
            for interface in e['interfaces'] or ['']:
                out.append({'port': e['port'], 'port_end': e['port_end'], 'proto': e['proto'],
                            'source': source, 'family': _family(source) if source else '',
                            'interface': interface, 'range_ok': True,
                            'ports_ufw': e['ports_ufw'], 'ports_firewalld': e['ports_firewalld']})
    return out


def member_entries(ports, members, this_host, sources=None, interfaces=None, from_members=True):
    """The entries a cluster role publishes for THIS_HOST: each of PORTS (dicts with port, port_end, proto, as the
    role writes them) with 'sources' (the other MEMBERS' addresses, a dict host -> address where '' is unknown and
    left out, when FROM_MEMBERS; then SOURCES; each once, in order) and, where INTERFACES is not None, 'interfaces'.

    [] where that would be nobody: no source at all when FROM_MEMBERS, no interface otherwise (then anyone on those
    interfaces, from SOURCES where given). Addresses are taken as given (cluster_member_addresses checks them);
    hardening's preflight parses every published entry."""
    if not isinstance(ports, (list, tuple)) or not all(isinstance(p, Mapping) for p in ports):
        raise FirewallError('expected the ports as a list of dicts, got %s' % _show(ports))
    if not isinstance(members, Mapping):
        raise FirewallError('expected the members as a dict (host -> address), got %s' % _show(members))
    for what, value in (('sources', sources), ('interfaces', interfaces)):
        if value is not None and not isinstance(value, (list, tuple)):
            raise FirewallError('%s must be a list, got %s' % (what, _show(value)))
    peers = [address for host, address in members.items() if host != this_host and address] if from_members else []
    allowed = _unique(peers + list(sources or []))
    if not (allowed if from_members else interfaces):
        return []
    extra = {'sources': allowed}
    if interfaces is not None:
        extra['interfaces'] = list(interfaces)
    return [dict(port, **extra) for port in ports]
