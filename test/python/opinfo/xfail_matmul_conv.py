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


XFAIL_SAMPLES = [
    (('einsum', '', 'int64', 'fwd'), at(3, 5, 6, 7),
     'integer einsum reduces to an integer bmm: integer matmul: the Tensor Engine multiplies floating-point operands only (importer reports it unsupported)') ,
]
