# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one MPI collective of the cluster tests (molecule/training_cluster, molecule/slurm): an mpi4py allreduce, put on
each node as a script, and the line its rank 0 prints when every rank took part."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

# Each rank adds rank + 1 and names its host: 1 + 2 = 3 on two hosts.
ALLREDUCE = """
import socket
from mpi4py import MPI
comm = MPI.COMM_WORLD
total = comm.allreduce(comm.Get_rank() + 1, op=MPI.SUM)
hosts = comm.allgather(socket.gethostname())
if comm.Get_rank() == 0:
    print("size=%d sum=%d hosts=%s" % (comm.Get_size(), total, ",".join(sorted(set(hosts)))))
"""


def allreduce_line(hostnames):
    """What ALLREDUCE's rank 0 prints with one rank on each of HOSTNAMES."""
    size = len(hostnames)
    return "size=%d sum=%d hosts=%s" % (size, size * (size + 1) // 2, ",".join(sorted(hostnames)))
