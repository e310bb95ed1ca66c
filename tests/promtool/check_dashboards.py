"""Check the role's Grafana dashboards: valid JSON, unique uid and panel ids, every panel on the provisioned
Prometheus data source (uid gpuops-prometheus) with non-empty queries. Called by tests/promtool/run.sh; the
queries themselves are run against a live Prometheus by the gpu_monitoring Molecule scenario."""
import glob
import json
import os
import sys

DATASOURCE_UID = "gpuops-prometheus"
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "roles", "gpu_monitoring_server", "files", "dashboards")
errors = []
uids = set()
files = sorted(glob.glob(os.path.join(root, "*.json")))
if not files:
    errors.append("no dashboards under %s" % root)
for path in files:
    name = os.path.basename(path)
    try:
        with open(path) as handle:
            board = json.load(handle)
    except ValueError as e:
        errors.append("%s: not valid JSON: %s" % (name, e))
        continue
    for key in ("uid", "title", "panels"):
        if not board.get(key):
            errors.append("%s: no %s" % (name, key))
    if board.get("uid") in uids:
        errors.append("%s: uid %s used twice" % (name, board.get("uid")))
    uids.add(board.get("uid"))
    ids = [p.get("id") for p in board.get("panels", [])]
    if len(ids) != len(set(ids)):
        errors.append("%s: panel ids are not unique" % name)
    for panel in board.get("panels", []):
        label = "%s: panel %r" % (name, panel.get("title"))
        if panel.get("datasource", {}).get("uid") != DATASOURCE_UID:
            errors.append("%s: data source is not %s" % (label, DATASOURCE_UID))
        if not panel.get("targets"):
            errors.append("%s: no queries" % label)
        for target in panel.get("targets", []):
            if not target.get("expr", "").strip():
                errors.append("%s: empty query %s" % (label, target.get("refId")))
    print("%s: %d panels" % (name, len(board.get("panels", []))))
if errors:
    sys.stderr.write("\n".join(errors) + "\n")
    sys.exit(1)
