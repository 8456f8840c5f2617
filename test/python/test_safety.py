"""Loader safety and race checking from Python.

A compiled artifact, truncated or with a flipped bit, is refused by
``trnc._C.Executable`` with a ValueError that says what is wrong (never a
crash); the suite runs every end-to-end test with the race checker on
(conftest.py sets TRNC_RACE_CHECK=1), and ``race_check=True`` passes on a
compiled program. Racy hand-built programs are covered in Catch2
(test/unit/RaceCheckerTest.cpp): Python cannot build one.
"""

import glob
import os

import pytest
import torch
from trnc.compiled_graph import buffer_of

pytestmark = pytest.mark.needs_native


def _compiled_artifact() -> bytes:
    """Compile a small graph through the backend; return its cached artifact."""
    f = torch.compile(lambda x, y: torch.relu(x @ y + 1.0), backend="neuron")
    x, y = torch.randn(8, 16), torch.randn(16, 4)
    torch.testing.assert_close(f(x, y), torch.relu(x @ y + 1.0))
    cache = os.environ.get("TRNC_CACHE_DIR", "")
    paths = sorted(glob.glob(os.path.join(cache, "**", "*.trnc"), recursive=True)) if cache else []
    if not paths:
        pytest.skip("no cached artifact to corrupt (artifact cache disabled?)")
    with open(paths[0], "rb") as fh:
        return fh.read()


@pytest.fixture
def artifact() -> bytes:
    return _compiled_artifact()


def test_race_checker_is_on_for_the_suite():
    assert os.environ.get("TRNC_RACE_CHECK") == "1"


def test_compiled_program_passes_the_race_checker(artifact):
    from trnc import _C

    exe = _C.Executable(artifact)
    assert exe.num_inputs == 2 and exe.num_outputs == 1
    x, y, out = torch.randn(8, 16), torch.randn(16, 4), torch.empty(8, 4)
    exe.run([buffer_of(x), buffer_of(y)], [buffer_of(out)], race_check=True)
    torch.testing.assert_close(out, torch.relu(x @ y + 1.0))


@pytest.mark.parametrize("keep", [0, 7, 24, 100, 0.5, -1])
def test_truncated_artifact_is_refused(artifact, keep):
    from trnc import _C

    n = int(len(artifact) * keep) if isinstance(keep, float) else keep % len(artifact) if keep < 0 else keep
    with pytest.raises(ValueError, match=r"^invalid trnc artifact: (file is|bad magic|.*truncated|.*outside)"):
        _C.Executable(artifact[:n])


def test_bit_flips_are_refused(artifact):
    from trnc import _C

    # Every 37th byte (header, table, every section), one bit each.
    for i in range(0, len(artifact), 37):
        bad = bytearray(artifact)
        bad[i] ^= 1 << (i % 8)
        with pytest.raises(ValueError, match=r"^invalid trnc artifact: ") as info:
            _C.Executable(bytes(bad))
        assert "invalid trnc artifact: invalid trnc artifact" not in str(info.value)


def test_not_an_artifact_is_refused():
    from trnc import _C

    with pytest.raises(ValueError, match="bad magic"):
        _C.Executable(b"PK\x03\x04" + bytes(60))
