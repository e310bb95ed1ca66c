"""Print the folder of Mitogen's strategy plugins (mitogen_linear ...) of the Python that runs this script: what
ANSIBLE_STRATEGY_PLUGINS (strategy_plugins in ansible.cfg) must name. The one place that knows where they are:
scripts/molecule-all.sh, benchmarks/fleet_scale.sh and tests/vm/server.sh run it with .venv's Python first on PATH."""
import os

import ansible_mitogen

print(os.path.join(os.path.dirname(ansible_mitogen.__file__), "plugins", "strategy"))
