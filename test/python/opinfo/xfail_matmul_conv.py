"""Expected failures of the OpInfo sweep for the matmul_conv area (see xfails.py for the
key format). Owned by the matmul_conv engineer: delete an entry when its operator lands
(the run fails on an unexpected pass); every entry says why it fails.
Seeded from a real sweep by seed_xfails.py.
"""

XFAIL = {
    ('mm', '', '*', 'bwd'): "compile error: node 'mm': error: 'trn.matmul' op matmul_k: a contraction of size 0 is unsupported",
    ('mm', '', 'bfloat16', 'fwd'): "compile error: node 'mm': error: 'trn.matmul' op matmul_k: a contraction of size 0 is unsupported",
    ('mm', '', 'int64', 'fwd'): "unsupported dtype: trnc cannot compile graph 'inference': 3 tensors have unsupported dtypes (trnc computes in float32, bfloat16 and float16)",
    ('bmm', '', '*', '*'): 'not lowered yet: aten.bmm.default',
    ('addmm', '', '*', 'bwd'): "compile error: node 'addmm': error: 'trn.matmul' op matmul_k: a contraction of size 0 is unsupported",
    ('addmm', '', 'float32', 'fwd'): "compile error: node 'addmm': error: 'trn.matmul' op matmul_k: a contraction of size 0 is unsupported",
    ('addmm', '', 'int64', 'fwd'): "unsupported dtype: trnc cannot compile graph 'inference': 4 tensors have unsupported dtypes (trnc computes in float32, bfloat16 and float16)",
    ('baddbmm', '', '*', '*'): 'not lowered yet: aten.bmm.default',
    ('nn.functional.linear', '', 'float32', 'fwd'): "RuntimeError: simulating 'inference' failed: input 0 is a null pointer",
    ('nn.functional.linear', '', 'int64', 'fwd'): "unsupported dtype: trnc cannot compile graph 'inference': 4 tensors have unsupported dtypes (trnc computes in float32, bfloat16 and float16)",
    ('einsum', '', '*', 'bwd'): 'not lowered yet: aten.bmm.default',
    ('einsum', '', 'int64', 'fwd'): "unsupported dtype: trnc cannot compile graph 'inference': 3 tensors have unsupported dtypes (trnc computes in float32, bfloat16 and float16)",
    ('nn.functional.conv1d', '', '*', '*'): 'not lowered yet: aten.convolution.default',
    ('nn.functional.conv2d', '', '*', '*'): 'not lowered yet: aten.convolution.default',
    ('nn.functional.max_pool2d', '', '*', '*'): 'not lowered yet: aten.max_pool2d_with_indices.default',
    ('nn.functional.avg_pool2d', '', '*', '*'): 'not lowered yet: aten.avg_pool2d.default',
    ('nn.functional.adaptive_avg_pool2d', '', '*', '*'): 'not lowered yet: aten._adaptive_avg_pool2d.default',
    ('nn.functional.interpolate', 'nearest', '*', '*'): 'not lowered yet: aten.arange.start_step',
    ('nn.functional.interpolate', 'bilinear', '*', '*'): 'not lowered yet: aten.arange.start_step',
}
