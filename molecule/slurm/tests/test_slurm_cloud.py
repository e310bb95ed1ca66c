"""Verify the nodes that scale with the queue: two jobs submitted to the empty CLOUD partition bring up two nodes
(containers of the image the scenario baked, started by slurmctld's ResumeProgram through the docker backend), which
join at first boot, run the jobs and are released after SuspendTime; a node whose GPU never comes fails its first-boot
check, gets no job, is released and stays DOWN. The timeline and its floor (starting a container of the image and booting it) are
printed and written to build/molecule/slurm-cloud-timeline.txt."""
import datetime
import json
import os
import re
import subprocess
import time

import pytest

from ansible_collections.gpuops.gpu_server.tests.support.waiting import wait_for

testinfra_hosts = ["docker://gpuops-slurm-ctl"]
BUILDER = "gpuops-slurm-image"
IMAGE = "local/gpuops-slurm-cloud:molecule"
LABEL = "gpuops.slurm-cluster=gpuops"
POWER_LOG = "/var/log/slurm/power.log"
TIMELINE = os.path.join(os.environ.get("MOLECULE_PROJECT_DIRECTORY", "."), "build", "molecule",
                        "slurm-cloud-timeline.txt")


def docker(*argv, check=True):
    return subprocess.run(["docker"] + list(argv), check=check, capture_output=True, text=True, timeout=300).stdout


def containers():
    """The names of the cluster's CLOUD node containers that exist now."""
    return set(docker("ps", "-a", "--filter", "label=" + LABEL, "--format", "{{.Names}}").split())


@pytest.fixture(scope="module")
def image():
    """The CLOUD nodes' image: the baked builder container, committed; every CLOUD container removed afterwards."""
    docker("commit", "--change", 'CMD ["/lib/systemd/systemd"]', BUILDER, IMAGE)
    yield IMAGE
    for name in containers():
        docker("rm", "-f", name, check=False)
    docker("rmi", IMAGE, check=False)


def job(host, job_id):
    return dict(re.findall(r"(\w+)=(\S*)", host.check_output("scontrol show job -o %s", job_id)))


def node(host, name):
    return host.check_output("scontrol show node %s -o", name)


def stamp(value):
    return datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%S")


def power_log(host):
    return host.file(POWER_LOG).content_string if host.file(POWER_LOG).exists else ""


def logged(host, pattern):
    """The time of the power log's last line that matches PATTERN; None where none does."""
    times = [stamp(line.split()[0]) for line in power_log(host).splitlines() if re.search(pattern, line)]
    return times[-1] if times else None


def responding(host, name):
    """When slurmctld last saw NAME register ("Node NAME now responding" in its log)."""
    times = re.findall(r"^\[(\S+?)\.\d+\] Node %s now responding$" % name,
                       host.file("/var/log/slurm/slurmctld.log").content_string, re.M)
    assert times, "slurmctld never saw %s register" % name
    return stamp(times[-1])


def floor(host):
    """Seconds to start a container of the image and boot it to multi-user, without joining: what a node costs at
    the least. The same `docker create` options and command as the docker backend's (the controller's settings)."""
    settings = json.loads(host.check_output("cat /etc/gpuops/slurm-power.json"))["docker"]
    name = "gpuops-slurm-floor"
    docker("rm", "-f", name, check=False)
    started = time.monotonic()
    docker(*(["run", "-d", "--name", name] + settings["run_args"] + [IMAGE] + settings["command"]))
    try:
        docker("exec", name, "systemctl", "is-system-running", "--wait", check=False)
        return time.monotonic() - started
    finally:
        docker("rm", "-f", name, check=False)


def cloud_states(host, partitions):
    return host.check_output("sinfo --noheader --Node --format '%%N|%%T' --partition=%s", partitions).split()


def test_cloud_nodes_are_powered_down_until_a_job_needs_them(host, image):
    states = cloud_states(host, "cloud,cloudgpu")
    assert sorted(states) == ["cloud1|idle~", "cloud2|idle~", "cloudgpu1|idle~"], states
    assert containers() == set()


def test_two_jobs_bring_up_two_nodes_that_run_them_and_are_released(host, image):
    bare = floor(host)
    submit = "sbatch --parsable -p cloud -N1 --exclusive -o /tmp/cloud-%%j.out --wrap %s"
    ids = [host.check_output(submit, "hostname; sleep 5").strip(), host.check_output(submit, "hostname; sleep 5").strip()]
    done = wait_for(lambda: all(job(host, i)["JobState"] == "COMPLETED" for i in ids) and [job(host, i) for i in ids],
                    300, lambda: "both jobs to complete: %s; power log: %s"
                    % ([job(host, i)["JobState"] for i in ids], power_log(host)), step=2)
    nodes = sorted(j["NodeList"] for j in done)
    assert nodes == ["cloud1", "cloud2"], done
    assert all(j["ExitCode"] == "0:0" for j in done), done
    wait_for(lambda: not containers() & {"cloud1", "cloud2"}, 240,
             lambda: "cloud1 and cloud2 released; containers %s, power log: %s" % (containers(), power_log(host)),
             step=2)
    # Powering down ('%') for SuspendTimeout, then powered down ('~'), ready for the next job.
    wait_for(lambda: sorted(cloud_states(host, "cloud")) == ["cloud1|idle~", "cloud2|idle~"], 120,
             lambda: "cloud1 and cloud2 powered down: %s" % cloud_states(host, "cloud"), step=2)

    lines = ["CLOUD nodes, docker backend (two jobs submitted to the empty partition 'cloud'; SuspendTime 20 s):"]
    for j in sorted(done, key=lambda j: j["NodeList"]):
        name = j["NodeList"]
        submitted = stamp(j["SubmitTime"])
        up = logged(host, r"resume %s up at" % name)
        registered = responding(host, name)
        released = logged(host, r"suspend .*%s.* ended \(.*%s" % (name, name))
        assert up and released, power_log(host)

        def at(moment, submitted=submitted):
            return "+%ds" % (moment - submitted).total_seconds()

        lines.append("  job %s on %s: submitted %s, node started %s, slurmd registered %s, job started %s, job ended %s, "
                     "node released %s" % (j["JobId"], name, j["SubmitTime"], at(up), at(registered),
                                           at(stamp(j["StartTime"])), at(stamp(j["EndTime"])), at(released)))
    waits = [(stamp(j["StartTime"]) - stamp(j["SubmitTime"])).total_seconds() for j in done]
    lines.append("  submission to job start: %s s; floor (docker run of the image + boot to multi-user, no join): %.1f s"
                 % (", ".join("%d" % w for w in waits), bare))
    lines.append("  (slurmctld starts a job on nodes it powered up at its next periodic job check, not when they register:"
                 " 'job_time_limit: Configuration for JobId=N complete' in slurmctld.log)")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(os.path.dirname(TIMELINE), exist_ok=True)
    with open(TIMELINE, "w") as f:
        f.write(text)


def test_a_node_that_fails_its_first_boot_check_gets_no_job_and_is_released(host, image):
    resumes = len(re.findall(r"resume cloudgpu1 ", power_log(host)))
    job_id = host.check_output("sbatch --parsable -p cloudgpu --gres=gpu:1 -o /tmp/cloudgpu-%j.out --wrap true").strip()
    try:
        state = wait_for(lambda: re.search(r"State=DOWN\S*POWERED_DOWN", node(host, "cloudgpu1"))
                         and "cloudgpu1" not in containers() and node(host, "cloudgpu1"), 240,
                         lambda: "cloudgpu1 set down by its first-boot check and released; node: %s; containers %s; "
                         "power log: %s" % (node(host, "cloudgpu1"), containers(), power_log(host)), step=2)
        # Its container has no GPU at all: what a GPU that fell off the bus, or an instance type without its GPUs,
        # looks like to the node.
        assert "Reason=gpuops first boot: " in state and "nvidia-smi describes 0 GPUs, expected 1" in state, state
        assert logged(host, r"resume cloudgpu1 up at") and logged(host, r"suspend cloudgpu1 ended \(cloudgpu1\)")
        # The job never ran: the node never registered, and the job waits for a node that can take it.
        assert job(host, job_id)["JobState"] == "PENDING", job(host, job_id)
        assert "Node cloudgpu1 now responding" not in host.file("/var/log/slurm/slurmctld.log").content_string
        # DOWN, the node is not started again for the waiting job (SuspendTimeout is 30 s).
        time.sleep(40)
        assert len(re.findall(r"resume cloudgpu1 ", power_log(host))) == resumes + 1, power_log(host)
        assert "cloudgpu1" not in containers()
    finally:
        host.run("scancel %s", job_id)
