"""Run one trnc-run command for ctest and check its exit code and output.

Usage: check_run.py FIXTURE_DIR EXIT REGEX -- COMMAND...

EXIT is the exit code the command must return; REGEX (Python re, searched in
stdout+stderr; empty: no check) must match. Exits 77 (ctest SKIP_RETURN_CODE)
when make_fixture.py skipped (FIXTURE_DIR/SKIPPED), and fails when the fixture
is missing: a case never passes without having run. Standard library only.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys


def main() -> int:
    if "--" not in sys.argv:
        print(__doc__, file=sys.stderr)
        return 2
    sep = sys.argv.index("--")
    fixture_dir, want_exit, pattern = sys.argv[1:sep]
    command = sys.argv[sep + 1 :]
    skipped = os.path.join(fixture_dir, "SKIPPED")
    if os.path.exists(skipped):
        with open(skipped) as f:
            print(f"SKIPPED: {f.read().strip()}")
        return 77
    if not os.path.exists(os.path.join(fixture_dir, "READY")):
        print(f"FAIL: no fixture in {fixture_dir} (did the runner.fixture test fail?)")
        return 1
    print("$ " + " ".join(command), flush=True)
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(proc.stdout, end="")
    ok = True
    if proc.returncode != int(want_exit):
        print(f"FAIL: exit code {proc.returncode}, expected {want_exit}")
        ok = False
    if pattern and not re.search(pattern, proc.stdout):
        print(f"FAIL: output does not match /{pattern}/")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
