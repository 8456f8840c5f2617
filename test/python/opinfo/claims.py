"""The operators trnc claims (issue 4), as OpInfo names, grouped by area.

Each entry is an OpInfo ``name`` or ``name.variant`` from
``torch.testing._internal.common_methods_invocations.op_db``. The area decides
which expected-failure table (xfail_<area>.py) covers the operator. Flags:

* ``RANDOM``: outputs depend on the RNG; only shape and dtype are compared
  (forward) and backward is not compared (eager and trnc draw different masks).
* ``REDUCES``: the operator sums over many terms (reductions, matmuls, norms,
  losses), so float32 tolerances grow with the contraction length K
  (harness.tolerance).
* ``FP64_ARBITRATED``: eager's own kernel is less accurate than the tolerance on
  some samples, so a mismatch with eager is decided by a float64 eager run: trnc
  passes where it is no further from float64 than eager is (plus the
  tolerance), Inductor's fp64_ref rule (harness._no_less_accurate).
"""

from __future__ import annotations

CLAIMS: dict[str, list[str]] = {
    "elementwise": [
        # unary
        "abs", "neg", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "reciprocal",
        "sin", "cos", "tanh", "sigmoid", "nn.functional.relu", "nn.functional.leaky_relu",
        "nn.functional.gelu", "nn.functional.silu", "nn.functional.mish",
        "nn.functional.softplus", "nn.functional.hardtanh", "nn.functional.relu6", "erf", "sign", "floor", "ceil", "round", "trunc",
        "clamp", "logical_not", "bitwise_not", "isnan", "isinf",
        # binary and ternary
        "add", "sub", "mul", "div.no_rounding_mode", "div.trunc_rounding",
        "div.floor_rounding", "pow", "maximum", "minimum", "remainder", "fmod",
        "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
        "bitwise_and", "bitwise_or", "bitwise_xor", "where", "lerp", "addcmul", "addcdiv",
        "gcd", "lcm",
    ],
    "reductions": [
        "sum", "mean", "amax", "amin", "max.reduction_with_dim", "min.reduction_with_dim",
        "max.reduction_no_dim", "min.reduction_no_dim", "argmax", "argmin", "prod",
        "var", "std", "any", "all", "logsumexp", "cumsum", "cumprod", "norm",
        "linalg.vector_norm",
    ],
    "norms_softmax_dropout": [
        "softmax", "log_softmax", "nn.functional.layer_norm", "nn.functional.rms_norm",
        "nn.functional.batch_norm", "nn.functional.group_norm", "nn.functional.dropout",
    ],
    "matmul_conv": [
        "mm", "bmm", "addmm", "baddbmm", "nn.functional.linear", "einsum",
        "nn.functional.scaled_dot_product_attention", "nn.functional.conv1d",
        "nn.functional.conv2d", "nn.functional.max_pool2d", "nn.functional.avg_pool2d",
        "nn.functional.adaptive_avg_pool2d", "nn.functional.interpolate.nearest",
        "nn.functional.interpolate.bilinear", "nn.functional.interpolate.linear",
        "nn.functional.interpolate.bicubic", "nn.functional.interpolate.trilinear",
        "nn.functional.upsample_bilinear", "nn.functional.interpolate.nearest-exact",
        "nn.functional.upsample_nearest", "nn.functional.grid_sample", "grid_sampler_2d",
    ],
    "data_movement": [
        "nn.functional.embedding", "index_select", "gather", "scatter", "scatter_add",
        "index_put", "masked_fill", "slice", "select", "cat", "stack", "split", "chunk",
        "narrow", "flip", "roll", "nn.functional.pad.constant", "nn.functional.pad.reflect",
        "nn.functional.pad.replicate", "tril", "triu", "repeat", "tile", "permute",
        "transpose", "expand", "view", "reshape", "squeeze", "unsqueeze", "clone",
        "contiguous", "to", "full", "zeros", "ones", "arange", "linspace",
        "nn.functional.one_hot", "topk", "sort", "argsort",
        "diagonal", "diag", "diag_embed", "diagonal_scatter", "trace",
        "unfold", "scatter_reduce.amax", "scatter_reduce.amin",
        "as_strided", "as_strided.partial_views", "as_strided_scatter",
    ],
    "losses": [
        "nn.functional.cross_entropy", "nn.functional.nll_loss", "nn.functional.mse_loss",
        "nn.functional.l1_loss", "nn.functional.smooth_l1_loss",
        "nn.functional.binary_cross_entropy", "nn.functional.binary_cross_entropy_with_logits",
        "nn.functional.kl_div",
    ],
    "linalg": [
        "linalg.solve_triangular", "triangular_solve", "linalg.vecdot", "linalg.multi_dot",
        "linalg.matrix_power", "linalg.cross", "linalg.diagonal", "linalg.matrix_norm",
        "linalg.norm",
    ],
}

RANDOM = {"nn.functional.dropout"}

# SDPA backward: ds = p * (dp - rowsum(dp * p)) cancels when a row of p is nearly
# one-hot (OpInfo's inputs in [-9, 9] give scores ~100), so gradient elements near
# zero carry rounding errors of eps * |dp| * |k|; eager's CPU flash kernel (blocked,
# D from the rounded output) is off by up to 5e-5 (float32) and 0.1 (bfloat16)
# from float64 on such samples where trnc's matmul rule is within 2e-5 and 0.04.
# Triangular solves amplify every rounding by the system's condition number (OpInfo's
# [-9, 9] entries give solutions and gradients ~1e4): eager's substitution and trnc's
# matmul products are equally far from float64 but not within eps of each other.
# linalg.cross in bfloat16: eager rounds each product a_i b_j before subtracting
# (cancellation); trnc subtracts in float32 (RMS error 0.054 vs eager's 0.074).
# grid_sample in bfloat16: eager's CPU kernel computes the source coordinates and
# blend weights in bfloat16 (a pixel coordinate of 20 carries an error of ~0.08
# px); trnc computes them in float32 and rounds the blended value once.
FP64_ARBITRATED = {
    "nn.functional.scaled_dot_product_attention", "linalg.solve_triangular", "triangular_solve",
    "linalg.cross", "nn.functional.grid_sample", "grid_sampler_2d",
    # Eager's 16-bit trilinear rounds between axes; trnc blends in float32
    # (decomp_resample.py) and is nearer float64 (half eager's RMS error).
    "nn.functional.interpolate.trilinear",
}

REDUCES = set(CLAIMS["reductions"]) | set(CLAIMS["matmul_conv"]) | set(CLAIMS["losses"]) | set(CLAIMS["linalg"]) | {
    "softmax", "log_softmax", "nn.functional.layer_norm", "nn.functional.rms_norm",
    "nn.functional.batch_norm", "nn.functional.group_norm",
}

AREA_OF: dict[str, str] = {name: area for area, names in CLAIMS.items() for name in names}


# OpInfos whose ``op`` wraps the functional in torch's ``wrapper_set_seed``,
# a function Dynamo refuses to trace (torch.testing is on its skip list): the
# sweep calls the functional itself.
def _callables() -> dict:
    import torch.nn.functional as F

    return {
        "nn.functional.dropout": F.dropout,
        "nn.functional.scaled_dot_product_attention": F.scaled_dot_product_attention,
    }


CALLABLES = _callables()
