"""Placeholder tests of the storage scenario's VM: the four NVMe disks are there under their stable names.

testinfra reaches the guest through Molecule's inventory (connection=ansible): the SSH address, port, key and
options of molecule/storage/molecule.yml and create.yml.
"""
import pytest

testinfra_hosts = ["ansible://gpuops-storage-vm"]
SERIALS = ["NVME0", "NVME1", "NVME2", "NVME3"]


@pytest.mark.parametrize("serial", SERIALS)
def test_nvme_by_id_link_is_a_block_device(host, serial):
    link = host.file("/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_%s" % serial)
    assert link.is_symlink
    assert host.file(link.linked_to).exists
    assert host.run("test -b %s", link.path).rc == 0
