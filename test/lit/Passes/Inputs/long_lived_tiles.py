"""Prints the input of allocate-long-lived.mlir: 40 small SBUF tiles live from
early on to the end of a function of ~1,300 instructions (per-channel
statistics kept for a graph's last outputs), between them 64 KiB tiles that
each live for one instruction and move the rotating cursor around SBUF, and
at the end one 200 KiB tile that only fits if the small tiles sit together."""

SMALL, BIG, STEPS = 40, 1240, 5


def tile(free):
    return f"!nisa.tile<sbuf, 128, {free}, f32>"


def memset(name, free):
    return f"  nisa.memset %{name} <0, [{free}, 1], [128, {free}]>, 0.0 on vector : {tile(free)}"


lines = ["func.func @long_lived() {"]
lines += [f"  %s{i} = nisa.alloc : {tile(16)}" for i in range(SMALL)]
lines += [f"  %b{k} = nisa.alloc : {tile(16384)}" for k in range(BIG)]
lines.append(f"  %huge = nisa.alloc : {tile(51200)}")
for k in range(BIG):
    if k % STEPS == 0 and k // STEPS < SMALL:
        lines.append(memset(f"s{k // STEPS}", 16))
    lines.append(memset(f"b{k}", 16384))
lines.append(memset("huge", 51200))
for i in range(SMALL):
    lines.append(f"  nisa.tensor_copy %s{i} <0, [16, 1], [128, 16]>, %s{i} <0, [16, 1], [128, 16]> on vector"
                 f" : {tile(16)}, {tile(16)}")
lines += ["  return", "}"]
print("\n".join(lines))
