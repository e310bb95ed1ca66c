"""The training_cluster role's members (and the slurm role's nodes): each one's cluster address, its names, and the
/etc/hosts lines that name them.

A member is read from a dict of its variables, of which these count: training_cluster_address,
training_cluster_interface, ansible_host, training_cluster_aliases and ansible_facts (the interface's
``ipv4.address``, ``default_ipv4.address``, ``hostname``). A key that is missing counts as not set.

What reaches /etc/hosts, the firewall and slurm.conf is parsed here: an address is exactly one IP address (the
``ipaddress`` module; normalised: ``fd00:0::1`` is ``fd00::1``), never text around one; no two members share one (every
member behind NAT has 10.0.2.15 as its default address); a name is a host name (letters, digits, '_', '-' and dots,
ASCII). ``address_problems`` and ``name_problems`` say what is wrong, one sentence per problem naming the member, the
variable that gave the value and the fix (the roles' preflight); the functions that return addresses, names or lines
raise ValueError with those sentences instead of returning them.

Used by the cluster_* filters (plugins/filter/cluster.py) on the control node. Standard library only.

Private to this collection: no compatibility promise to other collections.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ipaddress
import re
from collections.abc import Mapping

# What ansible_host looks like when it is meant as an IP address (a host name is not used): digits and dots, or hex
# digits and colons. One that looks so but is no address is refused; one that does not is a host name.
IP_PATTERN = re.compile(r'[0-9.]+|[0-9a-fA-F]*:[0-9a-fA-F:.]*', re.ASCII)
# A host name as /etc/hosts and slurm.conf take it: dot-separated labels of letters, digits, '_' and '-' ('-' neither
# first nor last; '_' as inventories use it), each at most 63 characters, at most 253 in all (RFC 1123, RFC 1035 2.3.4).
_LABEL = r'[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?'
HOST_NAME = re.compile(r'%s(?:\.%s)*' % (_LABEL, _LABEL), re.ASCII)
_MISSING = object()


def _get(value, *keys):
    """VALUE[key][key]...: _MISSING where a level is not a mapping or lacks the key."""
    for key in keys:
        if not isinstance(value, Mapping) or key not in value:
            return _MISSING
        value = value[key]
    return value


def _or(value, default):
    return default if value is _MISSING else value


def fact_name(interface):
    """The key of an interface in ansible_facts: '-' and '.' become '_' (eth0.100 -> eth0_100, br-x -> br_x)."""
    return interface.replace('-', '_').replace('.', '_')


def parse_address(value):
    """VALUE (a str) as one normalised IP address; ValueError saying why not: not a string, text around an address
    ('10.0.0.5 alias', '10.0.0.9\\n0.0.0.0 github.com'), an IPv6 zone (fe80::1%eth0), or an address no member can have
    (unspecified, loopback, multicast, reserved, IPv6 link-local)."""
    if isinstance(value, bool) or not isinstance(value, str):
        raise ValueError('is not an IP address (a string), got %r' % (value,))
    if '%' in value:
        raise ValueError('is not one IP address: %r has a zone (%%), which /etc/hosts and Slurm do not take' % (value,))
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        raise ValueError('is not one IP address, got %r' % (value,))
    kind = ('unspecified' if address.is_unspecified else 'loopback' if address.is_loopback
            else 'multicast' if address.is_multicast
            else 'reserved' if address.version == 4 and address.is_reserved
            else 'link-local (it needs a zone)' if address.version == 6 and address.is_link_local else '')
    if kind:
        raise ValueError('is a %s address (%s), which the other members cannot reach' % (kind, address))
    return str(address)


def member_address_source(variables, interface='', prefix='training_cluster'):
    """(raw value, where it came from) of a member's address, from its VARIABLES (a dict, see the module): its
    <PREFIX>_address, else its IPv4 address on the interface (its own <PREFIX>_interface, else INTERFACE, the calling
    host's), else its default IPv4 address, else its ansible_host where that looks like an IP address; ('', '') where
    none is known. The raw value is not checked (parse_address)."""
    variables = variables if isinstance(variables, Mapping) else {}
    facts = _or(_get(variables, 'ansible_facts'), {})
    own = _get(variables, prefix + '_interface')
    iface = '%s' % (_or(own, interface) or '',)
    set_address = _or(_get(variables, prefix + '_address'), None)
    if set_address not in (None, ''):
        return set_address, '%s_address' % prefix
    if iface:
        by_iface = _or(_get(facts, fact_name(iface), 'ipv4', 'address'), None)
        if by_iface not in (None, ''):
            return by_iface, ("ansible_facts['%s']['ipv4']['address'] (its address on %s, %s_interface%s)"
                              % (fact_name(iface), iface, prefix, '' if own is not _MISSING else ' of the host that asks'))
    by_default = _or(_get(facts, 'default_ipv4', 'address'), None)
    if by_default not in (None, ''):
        return by_default, ("ansible_facts['default_ipv4']['address'] (its default route's address%s)"
                            % (', as it has none on %s' % iface if iface else ''))
    host = _or(_get(variables, 'ansible_host'), None)
    if isinstance(host, str) and IP_PATTERN.fullmatch(host):
        return host, 'ansible_host'
    return '', ''


def member_address(variables, interface='', prefix='training_cluster'):
    """A member's address (member_address_source), normalised (parse_address); '' where none is known. ValueError
    naming the variable where the value is no usable address. PREFIX names the role whose <prefix>_address and
    <prefix>_interface count (the slurm role's slurm_address, slurm_interface)."""
    raw, source = member_address_source(variables, interface, prefix)
    if raw == '':
        return ''
    try:
        return parse_address(raw)
    except ValueError as e:
        raise ValueError('its %s %s' % (source, e))


def _fix(prefix):
    return ('set %s_interface to the interface of the cluster\'s private network (each member\'s address on it counts), '
            'or each member\'s own %s_address' % (prefix, prefix))


def address_problems(hosts, host_variables, interface='', prefix='training_cluster'):
    """What is wrong with the addresses of HOSTS (each read from HOST_VARIABLES[host], member_address): one sentence per
    member whose value is no usable address and per address that two members share, naming both members, where each
    address came from and the fix; [] when nothing is. A member without an address is not a problem here."""
    problems, owner = [], {}
    for host in hosts:
        variables = host_variables.get(host, {})
        raw, source = member_address_source(variables, interface, prefix)
        if raw == '':
            continue
        try:
            address = parse_address(raw)
        except ValueError as e:
            problems.append('%s: its %s %s: set it to exactly one IP address, such as 10.0.0.5 or fd00::5%s.'
                            % (host, source, e, ' (more names for /etc/hosts go in training_cluster_aliases)'
                               if prefix == 'training_cluster' else ''))
            continue
        if address in owner:
            first, first_source = owner[address]
            origin = ('both from %s' % source if source == first_source
                      else '%s from %s, %s from %s' % (first, first_source, host, source))
            nat = (' Every host behind NAT has the same default address (10.0.2.15 under VirtualBox and Vagrant).'
                   if 'default_ipv4' in source + first_source else '')
            problems.append('%s and %s have the same address %s, %s.%s /etc/hosts, the firewall and Slurm could not '
                            'tell them apart: %s.' % (first, host, address, origin, nat, _fix(prefix)))
            continue
        owner[address] = (host, source)
    return problems


def member_addresses(hosts, host_variables, interface='', prefix='training_cluster'):
    """{host: address} for each of HOSTS in order, each read from HOST_VARIABLES[host] (``member_address``); '' for a
    member whose address is unknown. ValueError with address_problems' sentences where there are any."""
    problems = address_problems(hosts, host_variables, interface, prefix)
    if problems:
        raise ValueError(' '.join(problems))
    return dict((host, member_address(host_variables.get(host, {}), interface, prefix)) for host in hosts)


def member_name(host, variables):
    """(name, where it came from) of a member: its short hostname (ansible_facts), else (none, or empty) its inventory
    name HOST."""
    name = _get(variables, 'ansible_facts', 'hostname')
    if name is _MISSING or name is None or name == '':
        return host, 'its inventory name'
    return name, "its hostname, ansible_facts['hostname']"


def _aliases(host, variables):
    aliases = _or(_get(variables, 'training_cluster_aliases'), [])
    if aliases is None:
        return []
    if isinstance(aliases, (str, bytes, Mapping)) or not isinstance(aliases, (list, tuple)):
        raise ValueError('training_cluster_aliases of %s must be a list, got %r' % (host, aliases))
    return list(aliases)


def _written_names(host, variables, prefix):
    """[(name, where)] of HOST that /etc/hosts (training_cluster: the inventory name, the hostname, the aliases) or
    slurm.conf (slurm: the hostname, else the inventory name) gets."""
    name, where = member_name(host, variables)
    if prefix != 'training_cluster':
        return [(name, where)]
    out = [(host, 'its inventory name')]
    if name != host or where != 'its inventory name':
        out.append((name, where))
    return out + [(alias, 'training_cluster_aliases[%d]' % i) for i, alias in enumerate(_aliases(host, variables))]


def name_problems(hosts, host_variables, prefix='training_cluster'):
    """What is wrong with the names HOSTS get in /etc/hosts (PREFIX training_cluster: inventory name, hostname and
    aliases) or slurm.conf (slurm: the hostname, else the inventory name): one sentence per name that is no host name
    and per name that two members claim (case-insensitively); [] when nothing is."""
    problems, owner = [], {}
    for host in hosts:
        variables = host_variables.get(host, {})
        try:
            names = _written_names(host, variables, prefix)
        except ValueError as e:
            problems.append('%s.' % e)
            continue
        for name, where in names:
            if not isinstance(name, str) or len(name) > 253 or not HOST_NAME.fullmatch(name):
                on_host = ' or on the host' if 'hostname' in where else ''
                problems.append("%s: %s %r is no host name (letters, digits, '_', '-' and dots; no spaces or line "
                                'breaks): fix it in the inventory%s.' % (host, where, name, on_host))
                continue
            key = name.lower()
            if key in owner and owner[key][0] != host:
                problems.append('%s and %s both have the name %s (%s: %s; %s: %s): give each member names of its own.'
                                % (owner[key][0], host, name, owner[key][0], owner[key][1], host, where))
                continue
            owner.setdefault(key, (host, where))
    return problems


def member_names(hosts, host_variables):
    """{host: name} of HOSTS: the name slurm.conf gives each (member_name); ValueError with name_problems' sentences."""
    problems = name_problems(hosts, host_variables, 'slurm')
    if problems:
        raise ValueError(' '.join(problems))
    return dict((host, member_name(host, host_variables.get(host, {}))[0]) for host in hosts)


def _unique(names):
    """NAMES without repeats, the first kept; case-insensitive, as Ansible's unique filter is."""
    out, seen = [], []
    for name in names:
        key = name.lower() if isinstance(name, str) else name
        if key not in seen:
            seen.append(key)
            out.append(name)
    return out


def hosts_lines(hosts, addresses, host_variables):
    """One /etc/hosts line per member of HOSTS with an address in ADDRESSES ({host: address}), in order: the address,
    then the member's inventory name, its short hostname (ansible_facts, else its inventory name) and its
    training_cluster_aliases, each name once. ValueError where an address is not one IP address, two members share
    one, or a name is no host name or two members' (name_problems)."""
    members = [h for h in hosts if addresses.get(h)]
    problems = name_problems(members, host_variables, 'training_cluster')
    seen = {}
    for host in members:
        try:
            address = parse_address(addresses[host])
        except ValueError as e:
            problems.append('%s: its address %s.' % (host, e))
            continue
        if address in seen:
            problems.append('%s and %s have the same address %s.' % (seen[address], host, address))
        seen.setdefault(address, host)
    if problems:
        raise ValueError(' '.join(problems))
    out = []
    for host in members:
        variables = host_variables.get(host, {})
        names = [pair[0] for pair in _written_names(host, variables, 'training_cluster')]
        out.append('%s %s' % (parse_address(addresses[host]), ' '.join(_unique(names))))
    return out
