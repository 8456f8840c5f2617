"""Prints the input of list-schedule-hoisted.mlir: a chain of 350 row tiles
of 64 KiB, each loaded from what the previous one stored, exponentiated in
place and stored, then 40 small tiles loaded and copied out. The list
scheduler hoists the small loads (nothing they depend on) into the DMA
stream's idle time along the chain, where they live long."""

ROWS, SMALL = 350, 40


def tile(free):
    return f"!nisa.tile<sbuf, 128, {free}, f32>"


def ap(free, offset=0):
    return f"<{offset}, [{free}, 1], [128, {free}]>"


ROW, TINY = 16384, 16
lines = ["func.func @hoisted(%in: memref<2097152xf32> {nisa.input = 0 : i64},",
         "                   %small: memref<2048xf32> {nisa.input = 1 : i64},",
         "                   %out: memref<2097152xf32> {nisa.output = 0 : i64},",
         "                   %sout: memref<81920xf32> {nisa.output = 1 : i64}) {"]
lines += [f"  %r{k} = nisa.alloc : {tile(ROW)}" for k in range(ROWS)]
lines += [f"  %s{i} = nisa.alloc : {tile(TINY)}" for i in range(SMALL)]
for k in range(ROWS):
    source = "%in" if k == 0 else "%out"
    lines.append(f"  nisa.dma_copy %r{k} {ap(ROW)}, {source} {ap(ROW)} : {tile(ROW)}, memref<2097152xf32>")
    lines.append(f"  nisa.activation exp %r{k} {ap(ROW)}, %r{k} {ap(ROW)} : {tile(ROW)}, {tile(ROW)}")
    lines.append(f"  nisa.dma_copy %out {ap(ROW)}, %r{k} {ap(ROW)} : memref<2097152xf32>, {tile(ROW)}")
for i in range(SMALL):
    lines.append(f"  nisa.dma_copy %s{i} {ap(TINY)}, %small {ap(TINY)} : {tile(TINY)}, memref<2048xf32>")
    lines.append(f"  nisa.dma_copy %sout {ap(TINY, i * 2048)}, %s{i} {ap(TINY)} : memref<81920xf32>, {tile(TINY)}")
lines += ["  return", "}"]
print("\n".join(lines))
