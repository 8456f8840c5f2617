"""Prints the input of list-schedule-repair.mlir: 40 independent tiles,
each loaded, exponentiated into a second tile and stored, of sizes drawn
from 2 to 48 KiB per partition (a fixed seed). Hoisting the loads of later
tiles fills SBUF with tiles of mixed sizes; the 20th exp's 48 KiB result
then finds no gap among them, though SBUF has room to spare."""

import random

rng = random.Random(7)
SIZES = [rng.choice([512, 1024, 2048, 4096, 6144, 8192, 12288]) for _ in range(40)]
TOTAL = sum(128 * f for f in SIZES)


def tile(free):
    return f"!nisa.tile<sbuf, 128, {free}, f32>"


def ap(free, offset=0):
    return f"<{offset}, [{free}, 1], [128, {free}]>"


lines = [f"func.func @fragmented(%in: memref<{TOTAL}xf32> {{nisa.input = 0 : i64}},",
         f"                      %out: memref<{TOTAL}xf32> {{nisa.output = 0 : i64}}) {{"]
lines += [f"  %t{i} = nisa.alloc : {tile(f)}" for i, f in enumerate(SIZES)]
lines += [f"  %u{i} = nisa.alloc : {tile(f)}" for i, f in enumerate(SIZES)]
offset = 0
for i, f in enumerate(SIZES):
    lines.append(f"  nisa.dma_copy %t{i} {ap(f)}, %in {ap(f, offset)} : {tile(f)}, memref<{TOTAL}xf32>")
    lines.append(f"  nisa.activation exp %u{i} {ap(f)}, %t{i} {ap(f)} : {tile(f)}, {tile(f)}")
    lines.append(f"  nisa.dma_copy %out {ap(f, offset)}, %u{i} {ap(f)} : memref<{TOTAL}xf32>, {tile(f)}")
    offset += 128 * f
lines += ["  return", "}"]
print("\n".join(lines))
