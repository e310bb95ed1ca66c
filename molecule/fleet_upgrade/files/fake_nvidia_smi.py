"""gpuops test fixture, NOT NVIDIA's nvidia-smi: shipped with the /usr/bin/nvidia-smi wrapper by the fixture
cuda-drivers-<branch> packages of the fleet_upgrade scenario, so that the driver version it reports changes when the
role installs another branch.

-q -x: a real H200 capture (/usr/share/gpuops-fixture/nvidia-smi.xml) with this package's driver version
(/usr/share/gpuops-fixture/driver-version) and its CUDA version; a failed row remapping when
/etc/gpuops-fake-gpu/sick or /etc/gpuops-fake-gpu/sick-on-<branch> exists.
--query-compute-apps=...: the lines of /run/gpuops-fake-gpu/compute-apps, if any (the GPUs' compute processes);
when it lists any, it leaves /run/gpuops-fake-gpu/compute-apps.seen (the fake scontrol's job ends after that).
"""
import os
import re
import sys

SHARE = "/usr/share/gpuops-fixture"
STATE = "/etc/gpuops-fake-gpu"
CUDA = {"535": "12.2", "550": "12.4", "570": "12.8", "580": "13.0"}

with open(os.path.join(SHARE, "driver-version")) as f:
    version = f.read().strip()
branch = version.split(".")[0]
args = sys.argv[1:]

if any(a.startswith("--query-compute-apps") for a in args):
    try:
        with open("/run/gpuops-fake-gpu/compute-apps") as f:
            apps = f.read()
    except OSError:
        apps = ""
    sys.stdout.write(apps)
    if apps.strip():
        open("/run/gpuops-fake-gpu/compute-apps.seen", "w").close()
    sys.exit(0)

if args[:2] == ["-q", "-x"]:
    with open(os.path.join(SHARE, "nvidia-smi.xml")) as f:
        xml = f.read()
    xml = re.sub(r"<driver_version>[^<]*<", "<driver_version>%s<" % version, xml)
    xml = re.sub(r"<cuda_version>[^<]*<", "<cuda_version>%s<" % CUDA.get(branch, "12.0"), xml)
    if os.path.exists(os.path.join(STATE, "sick")) or os.path.exists(os.path.join(STATE, "sick-on-" + branch)):
        xml = xml.replace("<remapped_row_failure>No<", "<remapped_row_failure>Yes<")
    sys.stdout.write(xml)
    sys.exit(0)

sys.exit("gpuops fake nvidia-smi: unsupported arguments %r" % args)
