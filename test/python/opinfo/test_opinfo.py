"""OpInfo conformance: every claimed operator's samples through trnc vs eager.

One test per (operator, dtype, mode). Verdicts are strict: a case with an
expected-failure entry must fail (an unexpected pass fails the test), a case
without one must pass every selected sample. See README.md for the commands.
"""

import pytest
import torch

import harness
import xfails
from helpers import needs_native

pytestmark = needs_native

CASES = list(harness.cases())


def _id(case) -> str:
    name, dtype, mode = case
    return f"{name}-{str(dtype).removeprefix('torch.')}-{mode}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_opinfo(case):
    name, dtype, mode = case
    op = harness.claimed_opinfos()[name]
    dtype_name = str(dtype).removeprefix("torch.")
    outcomes = harness.run_case(name, dtype, mode)
    harness.RESULTS.extend(outcomes)
    expected = xfails.lookup(op.name, op.variant_test_name, dtype_name, mode)
    failed = [o for o in outcomes if o.status == "fail"]
    ran = [o for o in outcomes if o.status != "skip"]
    if expected is not None:
        if ran and not failed:
            pytest.fail(
                f"unexpected pass (strict xfail): {len(ran)} sample(s) pass; delete the entry "
                f"({op.name!r}, {op.variant_test_name!r}, {dtype_name!r}, {mode!r}) ({expected})"
            )
        pytest.xfail(f"{expected} | observed: {failed[0].reason}" if failed else expected)
    unexpected = [o for o in failed if not o.expected]
    if unexpected:
        details = "\n".join(f"  sample {o.sample}: {o.reason}" for o in unexpected)
        pytest.fail(f"{len(unexpected)} of {len(outcomes)} sample(s) fail:\n{details}")
    passed_but_expected = [o for o in ran if o.expected and o.status == "pass"]
    if passed_but_expected:
        details = "\n".join(f"  sample {o.sample}: {o.expected}" for o in passed_but_expected)
        pytest.fail(f"unexpected pass (strict XFAIL_SAMPLES entry): delete the entry:\n{details}")
    if failed:
        pytest.xfail("; ".join(sorted({o.expected for o in failed})) + f" | observed: {failed[0].reason}")
    if not ran:
        pytest.skip("; ".join(sorted({o.reason for o in outcomes})) or "no samples")
