"""gpuops.gpu_server.jupyter: print the argon2 hash of the password read on stdin (JSON: password, current).

The current hash is printed again when it still matches the password, so that an unchanged password changes no file.
Run with the Jupyter virtual environment's Python (jupyter_server.auth). The password never appears on a command line.
"""
import json
import sys

from jupyter_server.auth.security import passwd, passwd_check

request = json.load(sys.stdin)
current = request.get("current") or ""
if current and passwd_check(current, request["password"]):
    print(current)
else:
    print(passwd(request["password"], algorithm="argon2"))
