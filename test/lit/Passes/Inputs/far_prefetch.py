"""Prints the input of list-schedule-far-prefetch.mlir: the rows of an AdamW
step as the lowering emits them (the bf16 GPT step's optimizer graph): per
row tile of [128, 1024], four loads (param, grad, exp_avg, exp_avg_sq), 14
instructions on Vector, Scalar and GpSimd, mostly one dependent chain, and
three stores; the two bias-correction tiles are loaded once. Program order
makes 44 KiB per partition live per row tile, so the loads of a row tile
more than three ahead of the frontier are far (past 75% of SBUF)."""

ROWS, FREE = 48, 1024
HBM = f"memref<{ROWS * 128 * FREE}xbf16>"
AP = f"<0, [{FREE}, 1], [128, {FREE}]>"


def tile(dtype):
    return f"!nisa.tile<sbuf, 128, {FREE}, {dtype}>"


BF, F32 = tile("bf16"), tile("f32")
# (result, dtype, instruction with {d} = its result and %name = row tiles)
BODY = [
    ("p1", BF, "tensor_scalar {d}, %p multiply 0.99, bypass 0.0 on gpsimd"),
    ("d", BF, "tensor_tensor subtract {d}, %g, %m on gpsimd"),
    ("d1", F32, "tensor_scalar {d}, %d multiply 0.1, bypass 0.0 on gpsimd"),
    ("m1", BF, "tensor_tensor add {d}, %m, %d1 on gpsimd"),
    ("v1", BF, "tensor_scalar {d}, %v multiply 0.999, bypass 0.0 on scalar"),
    ("g1", F32, "tensor_scalar {d}, %g multiply 0.001, bypass 0.0 on scalar"),
    ("g2", F32, "tensor_tensor multiply {d}, %g1, %g on gpsimd"),
    ("v2", BF, "tensor_tensor add {d}, %v1, %g2 on vector"),
    ("s", BF, "activation sqrt {d}, %v2"),
    ("s1", BF, "tensor_tensor divide {d}, %s, %c2 on vector"),
    ("s2", BF, "tensor_scalar {d}, %s1 add 1.0e-8, bypass 0.0 on vector"),
    ("s3", BF, "tensor_tensor divide {d}, %s2, %c1 on vector"),
    ("u", F32, "tensor_tensor divide {d}, %m1, %s3 on vector"),
    ("p2", BF, "tensor_tensor add {d}, %p1, %u on vector"),
]
TYPES = {"c1": BF, "c2": BF, "p": BF, "g": BF, "m": BF, "v": BF}
TYPES.update({name: ty for name, ty, _ in BODY})
INPUTS = ["p", "g", "m", "v"]
OUTPUTS = ["m1", "v2", "p2"]


def operand(name, k):
    return f"%{name}" if name in ("c1", "c2") else f"%{name}_{k}"


def instruction(k, name, text):
    words, operands, types = text.format(d="%DST").split(), [], []
    for i, w in enumerate(words):
        ref = w.rstrip(",")
        if ref.startswith("%"):
            key = name if ref == "%DST" else ref[1:]
            words[i] = f"{operand(key, k)} {AP}" + ("," if w.endswith(",") else "")
            types.append(TYPES[key])
    return f"  nisa.{' '.join(words)} : {', '.join(types)}"


args = [f"%{n}_in: {HBM} {{nisa.input = {i} : i64}}" for i, n in enumerate(INPUTS)]
args += [f"%{n}_out: {HBM} {{nisa.output = {i} : i64}}" for i, n in enumerate(OUTPUTS)]
args += [f"%{c}_in: memref<{128 * FREE}xbf16> {{nisa.input = {4 + i} : i64}}"
         for i, c in enumerate(("c1", "c2"))]
lines = [f"func.func @adamw_rows({', '.join(args)}) {{"]
for c in ("c1", "c2"):
    lines += [f"  %{c} = nisa.alloc : {BF}",
              f"  nisa.dma_copy %{c} {AP}, %{c}_in {AP} : {BF}, memref<{128 * FREE}xbf16>"]
for k in range(ROWS):
    hbm = f"<{k * 128 * FREE}, [{FREE}, 1], [128, {FREE}]>"
    for n in INPUTS:
        lines += [f"  %{n}_{k} = nisa.alloc : {BF}",
                  f"  nisa.dma_copy %{n}_{k} {AP}, %{n}_in {hbm} : {BF}, {HBM}"]
    for name, ty, text in BODY:
        lines += [f"  %{name}_{k} = nisa.alloc : {ty}", instruction(k, name, text)]
    for n in OUTPUTS:
        lines.append(f"  nisa.dma_copy %{n}_out {hbm}, %{n}_{k} {AP} : {HBM}, {BF}")
lines += ["  return", "}"]
print("\n".join(lines))
