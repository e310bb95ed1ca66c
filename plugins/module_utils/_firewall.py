# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The hardening role's firewall allow-list as each backend writes it.

An entry is a dict: port (a number, or the first port of a range), port_end (the range's last port; missing or None
= port alone), proto (missing = tcp), sources (addresses/CIDRs, IPv4 or IPv6; empty = anywhere) and interfaces
(inbound interfaces; empty = any). ``entries`` gives nftables one rule per entry, ``rules`` gives ufw and firewalld
one rule per source and interface. Nothing is refused here: ``range_ok`` marks what the role's preflight refuses.

Used by the firewall_entries and firewall_rules filters (plugins/filter/firewall.py) on the control node. Standard
library only.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from collections.abc import Mapping

MIN_PORT = 1
MAX_PORT = 65535


def as_int(value):
    """A port as Jinja's ``int`` filter reads it (the role's earlier templates did): '42' and 42.9 are 42, anything
    that is no number is 0 (which range_ok then refuses)."""
    try:
        if isinstance(value, str):
            return int(value, 10)
        return int(value)
    except OverflowError:  # an infinite float: Jinja fails there, this reads it as no number
        return 0
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError, OverflowError):
            return 0


def _list(entry, key):
    """An entry's list field: [] where it is missing or None; anything but a list is refused (a string would
    otherwise be read one character at a time)."""
    value = entry.get(key)
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple)):
        raise ValueError('%s of the entry for port %s must be a list, got %r' % (key, entry.get('port'), value))
    return list(value)


def entry(item):
    """One entry with what every backend needs, the entry's own fields first.

    port, port_end: the range as numbers (port_end = port for a single port); proto; sources, interfaces (lists);
    range_ok: 1 <= port <= port_end <= 65535; ports_ufw, ports_firewalld: the port or range as ufw and firewalld
    write it (29500:29599, 29500-29599); sources_v4, sources_v6: the sources without and with a colon;
    nft_dport: the port or range as nftables writes it, from the entry's values as given (29500-29599);
    nft_iifname: the interface match that starts an nftables rule (``iifname { "ib0", "eth1" } ``), '' for any.
    """
    if not isinstance(item, Mapping):
        raise ValueError('a firewall entry must be a dict, got %r' % (item,))
    first = as_int(item.get('port'))
    has_end = item.get('port_end') is not None
    last = as_int(item['port_end']) if has_end else first
    sources = _list(item, 'sources')
    interfaces = _list(item, 'interfaces')
    if last != first:
        ports_ufw, ports_firewalld = '%d:%d' % (first, last), '%d-%d' % (first, last)
    else:
        ports_ufw = ports_firewalld = '%d' % first
    return {
        'port': first, 'port_end': last, 'proto': item['proto'] if 'proto' in item else 'tcp',
        'sources': sources, 'interfaces': interfaces,
        'range_ok': MIN_PORT <= first <= last <= MAX_PORT,
        'ports_ufw': ports_ufw, 'ports_firewalld': ports_firewalld,
        'sources_v4': [s for s in sources if ':' not in str(s)],
        'sources_v6': [s for s in sources if ':' in str(s)],
        'nft_dport': '%s' % (item.get('port'),) + ('-%s' % (item['port_end'],) if has_end and last != first else ''),
        'nft_iifname': 'iifname { "%s" } ' % '", "'.join('%s' % i for i in interfaces) if interfaces else '',
    }


def entries(items):
    """Every entry of ITEMS (a list of dicts) through ``entry``, in order: nftables writes one rule per entry."""
    return [entry(item) for item in items or []]


def rules(items):
    """The allow-list as one rule per entry, source and interface, in order (sources outer, interfaces inner), for
    the backends that take one rule at a time (ufw, firewalld).

    Each rule: port, port_end, proto, source ('' = anywhere), interface ('' = any), range_ok, ports_ufw,
    ports_firewalld (as in ``entry``).
    """
    out = []
    for e in entries(items):
        for source in e['sources'] or ['']:
            for interface in e['interfaces'] or ['']:
                out.append({'port': e['port'], 'port_end': e['port_end'], 'proto': e['proto'],
                            'source': source, 'interface': interface, 'range_ok': e['range_ok'],
                            'ports_ufw': e['ports_ufw'], 'ports_firewalld': e['ports_firewalld']})
    return out
