"""Write the expected-failure tables from a sweep's results file.

    TRNC_OPINFO_RESULTS=/tmp/r.json python3 -m pytest -q opinfo   # any verdicts
    python3 opinfo/seed_xfails.py /tmp/r.json [--area elementwise]

Rewrites xfail_<area>.py (every area, or only --area) so that exactly the
cases that failed in that run are expected failures, each with the reason of
its first failing sample. Entries are folded into wildcards where every case
of an operator (or of one mode) failed for the same reason. Run it to seed a
table or after a broad change; hand-written reasons in the rewritten area
are replaced, so review the diff.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from claims import AREA_OF, CLAIMS  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def _split(full: str, opinfos: dict) -> tuple[str, str]:
    op = opinfos[full]
    return op.name, op.variant_test_name


def fold(cases: dict[tuple[str, str], str], ran: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """{(dtype, mode): reason} of failing cases -> entries with wildcards."""
    if cases and set(cases) == ran and len(set(cases.values())) == 1:
        return {("*", "*"): next(iter(cases.values()))}
    out: dict[tuple[str, str], str] = {}
    for mode in sorted({m for _, m in ran}):
        mine = {d: r for (d, m), r in cases.items() if m == mode}
        ran_dtypes = {d for d, m in ran if m == mode}
        if mine and set(mine) == ran_dtypes and len(set(mine.values())) == 1:
            out[("*", mode)] = next(iter(mine.values()))
        else:
            out.update({(d, mode): r for d, r in mine.items()})
    return out


def render(area: str, entries: list[tuple[tuple[str, str, str, str], str]]) -> str:
    head = f'''"""Expected failures of the OpInfo sweep for the {area} area (see xfails.py for the
key format). Owned by the {area} engineer: delete an entry when its operator lands
(the run fails on an unexpected pass); every entry says why it fails.
Seeded from a real sweep by seed_xfails.py.
"""

XFAIL = {{
'''
    body = "".join(f"    {key!r}: {reason!r},\n" for key, reason in entries)
    return head + body + "}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("--area", choices=sorted(CLAIMS))
    args = parser.parse_args()
    with open(args.results) as f:
        outcomes = json.load(f)["outcomes"]

    from harness import claimed_opinfos

    opinfos = claimed_opinfos()
    failing: dict[str, dict[tuple[str, str], str]] = collections.defaultdict(dict)
    ran: dict[str, set[tuple[str, str]]] = collections.defaultdict(set)
    for o in outcomes:
        if o["status"] == "skip":
            continue
        ran[o["op"]].add((o["dtype"], o["mode"]))
        if o["status"] == "fail":
            failing[o["op"]].setdefault((o["dtype"], o["mode"]), o["reason"])

    for area in [args.area] if args.area else list(CLAIMS):
        entries = []
        for full in CLAIMS[area]:
            name, variant = _split(full, opinfos)
            for (dtype, mode), reason in sorted(fold(failing.get(full, {}), ran[full]).items()):
                entries.append(((name, variant, dtype, mode), reason))
        with open(os.path.join(HERE, f"xfail_{area}.py"), "w") as f:
            f.write(render(area, entries))
        print(f"xfail_{area}.py: {len(entries)} entries")
    assert set(AREA_OF) >= set(failing), "results name operators that are not claimed"


if __name__ == "__main__":
    main()
