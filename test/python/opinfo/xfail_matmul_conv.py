"""Expected failures of the OpInfo sweep for the matmul_conv area (see xfails.py for the
key format). Owned by the matmul_conv engineer: delete an entry when its operator lands
(the run fails on an unexpected pass); every entry says why it fails.
Seeded from a real sweep by seed_xfails.py; reasons rewritten by hand.
"""

from xfail_predicates import at

XFAIL = {
    ('mm', '', 'int64', 'fwd'): 'integer matmul: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)',
    ('bmm', '', 'int64', 'fwd'): 'integer matmul: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)',
    ('addmm', '', 'int64', 'fwd'): 'integer matmul: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)',
    ('baddbmm', '', 'int64', 'fwd'): 'integer matmul: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)',
    ('nn.functional.linear', '', 'int64', 'fwd'): 'integer matmul: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)',
    ('nn.functional.conv1d', '', 'int64', 'fwd'): 'integer convolution: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)',
    ('nn.functional.conv2d', '', 'int64', 'fwd'): 'integer convolution: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)',
    ('nn.functional.avg_pool2d', '', 'int64', 'fwd'): 'integer avg_pool2d: lowered as a floating-point convolution; integer rounding not implemented',
    ('mm', '', 'int32', 'fwd'): 'integer matmul: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)',
    ('bmm', '', 'int32', 'fwd'): 'integer matmul: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)',
    ('addmm', '', 'int32', 'fwd'): 'integer matmul: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)',
    ('baddbmm', '', 'int32', 'fwd'): 'integer matmul: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)',
    ('nn.functional.linear', '', 'int32', 'fwd'): 'integer matmul: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)',
    ('einsum', '', 'int32', 'fwd'): 'integer einsum reduces to an integer bmm: integer matmul: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)',
}


def _grid_5d(s) -> bool:
    return s.input.dim() == 5


def _grid_mode(s) -> tuple:
    """(interpolation, padding) of a grid_sample / grid_sampler_2d sample, as ints."""
    if "mode" in s.kwargs or "padding_mode" in s.kwargs or len(s.args) < 3:
        modes = {"bilinear": 0, "nearest": 1, "bicubic": 2}
        pads = {"zeros": 0, "border": 1, "reflection": 2}
        return modes[s.kwargs.get("mode", "bilinear")], pads[s.kwargs.get("padding_mode", "zeros")]
    return s.args[1], s.args[2]


def _bicubic_reflection(s) -> bool:
    return not _grid_5d(s) and _grid_mode(s) == (2, 2)


def _bicubic_clamped(s) -> bool:
    return not _grid_5d(s) and _grid_mode(s)[0] == 2 and _grid_mode(s)[1] != 0


_GRID_3D = "5-D input: grid_sampler_3d (volumetric sampling) is not lowered"
_BICUBIC_REFLECTION = ("bicubic with reflection padding: PyTorch's bicubic rule (used as is) reflects through "
                       "an int8 cast, a dtype the engines do not compute in")
_BICUBIC_BWD = ("bicubic backward with border/reflection padding: PyTorch's bicubic rule clamps with "
                "aten.clamp, whose derivative is in-place; trnc refuses it by name (decomp_sampling)")

XFAIL_SAMPLES = [
    *[((op, '', '*', mode), _grid_5d, _GRID_3D)
      for op in ('nn.functional.grid_sample', 'grid_sampler_2d') for mode in ('fwd', 'bwd')],
    *[((op, '', '*', 'fwd'), _bicubic_reflection, _BICUBIC_REFLECTION)
      for op in ('nn.functional.grid_sample', 'grid_sampler_2d')],
    *[((op, '', '*', 'bwd'), _bicubic_clamped, _BICUBIC_BWD)
      for op in ('nn.functional.grid_sample', 'grid_sampler_2d')],
    (('einsum', '', 'int64', 'fwd'), at(3, 5, 6, 7),
     'integer einsum reduces to an integer bmm: integer matmul: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)') ,
]
