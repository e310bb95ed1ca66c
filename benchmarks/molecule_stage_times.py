#!/usr/bin/env python
"""Print how long each stage (check, converge, idempotence, verify ...) of each Molecule run took.

Reads the logs that scripts/molecule-all.sh writes (build/molecule/<run>.log by default, or the files given):
the stage names come from Molecule's "➜ stage: Executing" lines, the clock from ansible.posix.profile_tasks'
timestamps. Usage: benchmarks/molecule_stage_times.py [LOG ...]
"""
import glob
import os
import re
import sys
from datetime import datetime

# "[site > converge] Executing" without colours (make test), "site ➜ converge: Executing" with them.
STAGE = re.compile(r"(?:\[\w+ > (\w+)\] Executing)"
                   r"|(?:\u279c (?:\x1b\[[0-9;]*m)?(\w+)(?:\x1b\[[0-9;]*m)?: (?:\x1b\[[0-9;]*m)?Executing)")
STAMP = re.compile(r"\w+day (\d\d \w+ \d{4})\s+(\d\d:\d\d:\d\d)")
STAGES = ["create", "prepare", "check", "converge", "idempotence", "verify", "destroy"]


def stage_times(path):
    """{stage: seconds} from the first to the last timestamp seen in each stage (verify has none: it is the
    time from the end of the stage before it to the start of the stage after it)."""
    spans, order, stage = {}, [], None
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            match = STAGE.search(line)
            if match:
                stage = match.group(1) or match.group(2)
                # A stage that runs twice (destroy, first and last) counts its last run.
                if stage in order:
                    order.remove(stage)
                    spans.pop(stage, None)
                order.append(stage)
                continue
            stamp = STAMP.search(line)
            if stamp and stage:
                when = datetime.strptime("%s %s" % stamp.groups(), "%d %B %Y %H:%M:%S")
                first, _last = spans.get(stage, (when, when))
                spans[stage] = (first, when)
    seconds = {s: int((b - a).total_seconds()) for s, (a, b) in spans.items()}
    if "verify" in order and "verify" not in spans:
        i = order.index("verify")
        before = [spans[s][1] for s in order[:i] if s in spans]
        after = [spans[s][0] for s in order[i + 1:] if s in spans]
        if before and after:
            seconds["verify"] = int((after[0] - before[-1]).total_seconds())
    return seconds


def main(paths):
    paths = paths or sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "build", "molecule", "*.log")))
    print("%-28s" % "run" + "".join("%12s" % s for s in STAGES))
    for path in paths:
        times = stage_times(path)
        name = os.path.basename(path)[:-4] if path.endswith(".log") else os.path.basename(path)
        print("%-28s" % name + "".join("%12s" % (times[s] if s in times else "-") for s in STAGES))


if __name__ == "__main__":
    main(sys.argv[1:])
