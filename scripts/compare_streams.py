#!/usr/bin/env python3
"""Whether two IR files are the same program up to SSA value numbering.

    python3 scripts/compare_streams.py before.mlir after.mlir

Every SSA name (%12, %arg3, %c0, ...) is renamed by the order of its first
use in its file, so two files that differ only in numbering compare equal
while an operand swapped for another value still differs. Meant for checking
that a lowering change leaves a phase's output as it was (docs/lowering.md:
`compile-to=unroll` from a tree before and after). Exit status 0 when equal,
1 with the first differing lines otherwise.
"""

import difflib
import re
import sys

_SSA = re.compile(r"%[0-9A-Za-z_#:]+")


def canonical(path: str) -> list[str]:
    names: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        return names.setdefault(match.group(0), f"%v{len(names)}")

    with open(path) as f:
        return [_SSA.sub(rename, line) for line in f]


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    a, b = canonical(argv[1]), canonical(argv[2])
    if a == b:
        print(f"same program ({len(a)} lines)")
        return 0
    diff = list(difflib.unified_diff(a, b, argv[1], argv[2], n=0))
    print(f"differ ({sum(1 for d in diff if d[:1] in '+-') - 2} lines); first differences:")
    sys.stdout.writelines(diff[:12])
    return 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except BrokenPipeError:  # `| head`: the verdict line was read
        sys.stderr.close()
        sys.exit(1)
