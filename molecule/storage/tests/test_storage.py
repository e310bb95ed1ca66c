"""Verify the storage role in the VM (molecule/storage): what converge built, what it must refuse, and a reboot.

The tests run in the file's order; the refusals change nothing, and the reboot comes last: after it the volumes
must come back by themselves (mdadm from mdadm.conf, LUKS from crypttab with the key fetched by its unit, mounts by
UUID from fstab), the ephemeral one new.
"""
import hashlib
import json
import os
import re

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.playbook import molecule_playbook

testinfra_hosts = ["ansible://gpuops-storage-vm"]

EPHEMERAL = os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]
PROJECT = os.environ["MOLECULE_PROJECT_DIRECTORY"]
ROLE_PLAY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "role.yml")
DISK = "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_NVME%d"
DATASET = os.path.join(EPHEMERAL, "dataset", "imagenet-mini")


def ansible(*args, play=ROLE_PLAY, extra=None):
    """ansible-playbook (or ansible, with play=None) against the scenario's inventory; (rc, output)."""
    if play:
        return molecule_playbook(play, *args, extra_vars=extra)
    return molecule_playbook("gpu_servers", *args, extra_vars=extra, command="ansible")


def layers(host, mount_point):
    """The device types from the mounted filesystem down to the disks, and the filesystem's type."""
    mnt = json.loads(host.check_output("findmnt --json --output SOURCE,FSTYPE,OPTIONS --mountpoint %s", mount_point))
    fs = mnt["filesystems"][0]
    tree = json.loads(host.check_output("lsblk --json --list --inverse --paths --output NAME,TYPE %s", fs["source"]))
    return fs, [d["type"] for d in tree["blockdevices"]], [d["name"] for d in tree["blockdevices"]]


def md_path(host):
    """The array under gpuops-local, by its UUID (the boot may assemble it as /dev/md127)."""
    export = dict(line.split("=", 1) for line in host.check_output("mdadm --examine --export %s", DISK % 0).splitlines())
    return "/dev/disk/by-id/md-uuid-" + export["MD_UUID"], export["MD_UUID"]


def signature(host, device):
    return host.check_output("blkid --probe --output export %s || true", device)


def local_checksums():
    out = {}
    for base, _dirs, files in os.walk(DATASET):
        for name in files:
            path = os.path.join(base, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, DATASET)] = hashlib.sha256(f.read()).hexdigest()
    return out


def guest_checksums(host, root="/mnt/local/datasets/imagenet-mini"):
    out = {}
    for line in host.check_output("cd %s && find . -type f -exec sha256sum {} +", root).splitlines():
        digest, path = line.split(None, 1)
        out[path[2:]] = digest
    return out


def test_raid0_luks_xfs_volume_is_mounted(host):
    fs, types, names = layers(host, "/mnt/local")
    assert fs["fstype"] == "xfs" and fs["source"] == "/dev/mapper/gpuops-local"
    assert types[:2] == ["crypt", "raid0"] and types.count("disk") == 2, types
    assert host.check_output("blkid -s LABEL -o value /dev/mapper/gpuops-local") == "gpuops-local"
    md, _uuid = md_path(host)
    detail = host.check_output("mdadm --detail %s", md)
    assert "Raid Level : raid0" in detail and "Raid Devices : 2" in detail
    assert re.search(r"^Version:\s+2$", host.check_output("cryptsetup luksDump %s", md), re.M)
    assert host.check_output("blkid -p -s TYPE -o value %s", md) == "crypto_LUKS"


def test_fstab_mounts_by_uuid_with_nofail(host):
    uuid = host.check_output("blkid -s UUID -o value /dev/mapper/gpuops-local")
    fstab = [line.split() for line in host.file("/etc/fstab").content_string.splitlines() if line.strip()]
    local = [f for f in fstab if f[1] == "/mnt/local"]
    assert local == [["UUID=" + uuid, "/mnt/local", "xfs", "defaults,noatime,nofail,x-systemd.device-timeout=300s,_netdev", "0", "0"]]


def test_array_and_mappings_are_recorded_for_the_boot(host):
    conf = host.file("/etc/mdadm/mdadm.conf").content_string
    md, uuid = md_path(host)
    assert "ARRAY /dev/md/gpuops-local metadata=1.2 UUID=%s" % uuid in conf.splitlines(), conf
    crypttab = [line.split() for line in host.file("/etc/crypttab").content_string.splitlines()
                if line.strip() and not line.startswith("#")]
    luks_uuid = host.check_output("blkid -p -s UUID -o value %s", md)
    assert ["gpuops-local", "UUID=" + luks_uuid, "/run/gpuops-storage/gpuops-local.key", "luks,discard,nofail,_netdev"] in crypttab
    assert host.file("/etc/crypttab").mode == 0o600


def test_key_comes_from_the_command_and_stays_root_only(host):
    script = host.file("/etc/gpuops-storage/gpuops-local.key-command")
    assert script.user == "root" and script.mode == 0o700 and "cat /root/kms-data-key" in script.content_string
    key = host.file("/run/gpuops-storage/gpuops-local.key")
    assert key.user == "root" and key.mode & 0o077 == 0
    assert key.content_string == host.file("/root/kms-data-key").content_string
    assert host.run("systemctl is-active 'gpuops-storage-key@gpuops\\x2dlocal.service'").stdout.strip() == "active"
    # The key never reached a log or a command line: not in the journal.
    secret = host.file("/root/kms-data-key").content_string.strip()
    assert secret not in host.run("journalctl -b --no-pager").stdout


@pytest.mark.parametrize("name,owner,mode", [("datasets", "trainer", 0o755), ("checkpoints", "trainer", 0o750)])
def test_directories(host, name, owner, mode):
    d = host.file("/mnt/local/" + name)
    assert d.is_directory and d.user == owner and d.group == owner and d.mode == mode


def test_dataset_is_copied_complete(host):
    expected = local_checksums()
    assert len(expected) == 13
    assert guest_checksums(host) == expected
    assert host.file("/mnt/local/datasets/imagenet-mini/train/shard-00.bin").user == "trainer"
    env = host.file("/etc/gpuops-storage/datasets.env")
    assert env.user == "root" and env.mode == 0o600 and "gpuops-test-secret" in env.content_string


def test_docker_data_root_is_handed_to_the_docker_role(host):
    assert host.file("/root/gpuops_docker_data_root").content_string.strip() == "/mnt/local/docker"


def test_timers_and_units_are_enabled(host):
    assert host.service("fstrim.timer").is_enabled
    assert host.service("gpuops-storage-gpuops-local-dirs.service").is_enabled
    assert host.service("gpuops-storage-key@gpuops\\x2dlocal.service").is_enabled
    assert host.service("remote-cryptsetup.target").is_enabled


def test_scratch_volume_on_a_wiped_disk_with_a_key_per_boot(host):
    # NVME2 holds ext4 "olddata" (prepare.yml) and is listed in storage_wipe_devices: the role wipes it and opens
    # dm-crypt with a random key (crypttab /dev/urandom, tmp=ext4: systemd formats it at each boot).
    assert "olddata" in signature(host, DISK % 2)
    rc, out = ansible(extra={"storage_name": "scratch", "storage_devices": [DISK % 2], "storage_wipe_devices": [DISK % 2],
                             "storage_fstype": "ext4", "storage_encryption": "ephemeral", "storage_mount_point": "/mnt/scratch",
                             "storage_directories": [{"name": "tmp", "owner": "root", "group": "root", "mode": "1777"}]})
    assert rc == 0, out[-3000:]
    assert "building the volume scratch on blank disks" in out and "wiping " + DISK % 2 in out
    fs, types, _names = layers(host, "/mnt/scratch")
    assert fs["fstype"] == "ext4" and types == ["crypt", "disk"], types
    assert "type:    PLAIN" in host.check_output("cryptsetup status scratch")
    assert "olddata" not in signature(host, DISK % 2)
    assert host.file("/mnt/scratch/tmp").mode == 0o1777
    crypttab = [line.split() for line in host.file("/etc/crypttab").content_string.splitlines() if line.strip()]
    assert ["scratch", DISK % 2, "/dev/urandom", "plain,cipher=aes-xts-plain64,size=512,discard,nofail,tmp=ext4"] in crypttab
    fstab = [line.split() for line in host.file("/etc/fstab").content_string.splitlines() if line.strip()]
    assert ["/dev/mapper/scratch", "/mnt/scratch", "ext4", "defaults,noatime,nofail,x-systemd.device-timeout=300s", "0", "0"] in fstab
    assert host.service("gpuops-storage-scratch-dirs.service").is_enabled


def test_disks_with_data_are_refused_and_left_alone(host):
    # The disks found by model, as on a cloud instance (/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_<serial>): all four. NVME3
    # holds an ext4 filesystem (prepare.yml), NVME0 is a member of the array gpuops-local: both are named, and nothing
    # is written to either.
    before = signature(host, DISK % 3)
    assert "userdata" in before
    member = signature(host, DISK % 0)
    rc, out = ansible(extra={"storage_name": "data2", "storage_device_models": ["QEMU NVMe Ctrl"], "storage_mount_point": "/mnt/data2"})
    assert rc != 0
    for n in range(4):
        assert DISK % n in out, "NVME%d was not found by its model" % n
    assert "%s holds ext4 \"userdata\", which is not the volume data2" % (DISK % 3) in out
    assert "%s holds linux_raid_member" % (DISK % 0) in out
    assert "storage_wipe_devices" in out and "changed nothing" in out
    assert signature(host, DISK % 3) == before and signature(host, DISK % 0) == member
    assert host.run("mount -o ro %s /mnt && cat /mnt/keep.txt; umount /mnt", DISK % 3).stdout.startswith("precious userdata")
    assert not host.file("/mnt/data2").exists


def test_changing_the_encryption_of_a_volume_is_refused(host):
    uuid = host.check_output("blkid -s UUID -o value /dev/mapper/gpuops-local")
    rc, out = ansible(extra={"storage_devices": [DISK % 0, DISK % 1]})
    assert rc != 0
    assert 'holds "crypto_LUKS", but storage_encryption none and storage_fstype xfs expect "xfs"' in out
    assert "Nothing was changed" in out
    assert host.check_output("blkid -s UUID -o value /dev/mapper/gpuops-local") == uuid


def test_requiring_encryption_without_it_is_refused_before_any_change(host):
    rc, out = ansible(extra={"storage_require_encryption": True, "storage_devices": [DISK % 3]})
    assert rc != 0 and "storage_require_encryption is set but storage_encryption is none" in out
    assert "TASK [gpuops.gpu_server.storage : Read what is on each disk" not in out


COLD = {"storage_name": "cold", "storage_devices": [DISK % 3], "storage_fstype": "ext4", "storage_encryption": "keyfile",
        "storage_mount_point": "/mnt/cold",
        "storage_directories": [{"name": "results", "owner": "trainer", "group": "trainer", "mode": "0750"}]}


def cold_state(host):
    """The filesystem's UUID, the LUKS header's UUID, and the crypttab and fstab lines of the volume cold."""
    crypttab = [line.split() for line in host.file("/etc/crypttab").content_string.splitlines()
                if line.split()[:1] == ["cold"]]
    fstab = [line.split() for line in host.file("/etc/fstab").content_string.splitlines() if line.split()[1:2] == ["/mnt/cold"]]
    return (host.check_output("blkid -s UUID -o value /dev/mapper/cold"), host.check_output("blkid -p -s UUID -o value %s", DISK % 3),
            crypttab, fstab)


def test_keyfile_volume_is_built_anew_when_its_disk_comes_back_empty(host):
    # NVME3's ext4 "userdata" was refused above; listed in storage_wipe_devices, it becomes LUKS2 with a key file.
    rc, out = ansible(extra=dict(COLD, storage_wipe_devices=[DISK % 3]))
    assert rc == 0, out[-3000:]
    assert "building the volume cold on blank disks" in out and "wiping " + DISK % 3 in out
    fs, types, _names = layers(host, "/mnt/cold")
    assert fs["fstype"] == "ext4" and types == ["crypt", "disk"], types
    assert re.search(r"^Version:\s+2$", host.check_output("cryptsetup luksDump %s", DISK % 3), re.M)
    key = host.file("/etc/gpuops-storage/cold.key")
    assert key.user == "root" and key.group == "root" and key.mode == 0o400 and key.size == 64
    key_sum = host.check_output("sha256sum /etc/gpuops-storage/cold.key")
    fs_uuid, luks_uuid, crypttab, fstab = cold_state(host)
    assert crypttab == [["cold", "UUID=" + luks_uuid, "/etc/gpuops-storage/cold.key", "luks,discard,nofail"]]
    assert fstab == [["UUID=" + fs_uuid, "/mnt/cold", "ext4", "defaults,noatime,nofail,x-systemd.device-timeout=60s", "0", "0"]]
    host.run_test("touch /mnt/cold/results/epoch-1.pt")

    # A stop/start: the instance-store disk comes back blank, while the root disk keeps the key, fstab, crypttab
    # and the role's record. The next run, without storage_wipe_devices, builds the volume anew and says so.
    host.run_test("systemctl stop mnt-cold.mount systemd-cryptsetup@cold.service && wipefs --all --quiet %s", DISK % 3)
    assert signature(host, DISK % 3) == ""
    rc, out = ansible(extra=COLD)
    assert rc == 0, out[-3000:]
    assert "the disks of cold came back empty (an instance-store volume after a stop/start, or replaced disks): building it anew" in out
    new_fs_uuid, new_luks_uuid, crypttab, fstab = cold_state(host)
    assert new_fs_uuid != fs_uuid and new_luks_uuid != luks_uuid
    assert crypttab == [["cold", "UUID=" + new_luks_uuid, "/etc/gpuops-storage/cold.key", "luks,discard,nofail"]]
    assert fstab == [["UUID=" + new_fs_uuid, "/mnt/cold", "ext4", "defaults,noatime,nofail,x-systemd.device-timeout=60s", "0", "0"]]
    assert host.check_output("sha256sum /etc/gpuops-storage/cold.key") == key_sum
    results = host.file("/mnt/cold/results")
    assert results.is_directory and results.user == "trainer" and results.mode == 0o750
    assert not host.file("/mnt/cold/results/epoch-1.pt").exists


def test_after_a_reboot_the_volumes_come_back(host):
    local_uuid = host.check_output("blkid -s UUID -o value /dev/mapper/gpuops-local")
    scratch_uuid = host.check_output("blkid -s UUID -o value /dev/mapper/scratch")
    cold = cold_state(host)
    host.run_test("touch /mnt/cold/results/kept.pt")
    host.run("touch /mnt/scratch/tmp/gone-after-reboot")
    rc, out = ansible("-b", "-m", "ansible.builtin.reboot", "-a", "reboot_timeout=600", play=None)
    assert rc == 0, out
    # SSH answers before the boot is done: wait for it (the key unit waits for the network, the mounts for the keys).
    state = host.run("timeout 300 systemctl is-system-running --wait")
    boot = host.run("systemctl --failed --no-legend; systemctl status --no-pager 'systemd-cryptsetup@*' 'mnt-*.mount' 2>&1 | tail -40")
    assert state.stdout.strip() in ("running", "degraded"), state.stdout + boot.stdout
    for mount_point in ("/mnt/local", "/mnt/scratch", "/mnt/cold"):
        assert host.run("findmnt --mountpoint %s", mount_point).rc == 0, "%s not mounted after the reboot:\n%s" % (mount_point, boot.stdout)
    fs, types, _names = layers(host, "/mnt/local")
    assert fs["fstype"] == "xfs" and types[:2] == ["crypt", "raid0"]
    assert host.check_output("blkid -s UUID -o value /dev/mapper/gpuops-local") == local_uuid
    assert guest_checksums(host) == local_checksums()
    fs, types, _names = layers(host, "/mnt/scratch")
    assert fs["fstype"] == "ext4" and types == ["crypt", "disk"]
    assert host.check_output("blkid -s UUID -o value /dev/mapper/scratch") != scratch_uuid
    assert not host.file("/mnt/scratch/tmp/gone-after-reboot").exists
    assert host.file("/mnt/scratch/tmp").mode == 0o1777
    assert host.file("/mnt/local/checkpoints").user == "trainer"
    # The key file's volume opens from crypttab at boot, the same filesystem with its file.
    assert cold_state(host) == cold and host.file("/mnt/cold/results/kept.pt").exists
