"""scripts/compare_streams.py: equal up to SSA numbering, different when an
operand is swapped for another value (what renaming every value alike hid)."""

import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "compare_streams.py")

BEFORE = """%1 = nisa.alloc : <sbuf, 128, 512, f32>
%2 = nisa.alloc : <sbuf, 128, 512, f32>
nisa.tensor_tensor add %3 <0, [512, 1], [128, 512]>, %1 <0, [512, 1], [128, 512]>, %2 <0, [512, 1], [128, 512]> on vector
"""


def run(tmp_path, after: str):
    a, b = tmp_path / "a.mlir", tmp_path / "b.mlir"
    a.write_text(BEFORE)
    b.write_text(after)
    return subprocess.run([sys.executable, SCRIPT, str(a), str(b)], capture_output=True, text=True)


def test_renumbered_is_the_same_program(tmp_path):
    after = BEFORE.replace("%1", "%10").replace("%2", "%20").replace("%3", "%30")
    proc = run(tmp_path, after)
    assert proc.returncode == 0, proc.stdout
    assert "same program (3 lines)" in proc.stdout


def test_swapped_operand_differs(tmp_path):
    # The add reads %1 twice instead of %1 and %2: same text shape, renamed
    # alike it would look equal.
    after = BEFORE.replace(">, %2 <0", ">, %1 <0")
    proc = run(tmp_path, after)
    assert proc.returncode == 1
    assert "differ" in proc.stdout and "tensor_tensor" in proc.stdout


def test_usage(tmp_path):
    proc = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
    assert proc.returncode == 2 and "compare_streams.py before.mlir after.mlir" in proc.stderr
