"""Expected failures of the OpInfo sweep for the matmul_conv area (see xfails.py for the
key format). Owned by the matmul_conv engineer: delete an entry when its operator lands
(the run fails on an unexpected pass); every entry says why it fails.
Seeded from a real sweep by seed_xfails.py.
"""

XFAIL = {
    ('mm', '', '*', 'bwd'): "RuntimeError: simulating 'forward' failed: input 0 is a null pointer",
    ('mm', '', 'bfloat16', 'fwd'): "RuntimeError: simulating 'inference' failed: input 0 is a null pointer",
    ('mm', '', 'int64', 'fwd'): "compile error: trnc cannot compile graph 'inference': internal error: the imported IR does not verify (please report this importer bug):",
    ('bmm', '', 'int64', 'fwd'): "compile error: trnc cannot compile graph 'inference': internal error: the imported IR does not verify (please report this importer bug):",
    ('addmm', '', '*', 'bwd'): "RuntimeError: simulating 'forward' failed: input 1 is a null pointer",
    ('addmm', '', 'float32', 'fwd'): "RuntimeError: simulating 'inference' failed: input 1 is a null pointer",
    ('addmm', '', 'int64', 'fwd'): "compile error: trnc cannot compile graph 'inference': internal error: the imported IR does not verify (please report this importer bug):",
    ('baddbmm', '', 'int64', 'fwd'): "compile error: trnc cannot compile graph 'inference': internal error: the imported IR does not verify (please report this importer bug):",
    ('nn.functional.linear', '', 'float32', 'fwd'): "RuntimeError: simulating 'inference' failed: input 0 is a null pointer",
    ('nn.functional.linear', '', 'int64', 'fwd'): "compile error: trnc cannot compile graph 'inference': internal error: the imported IR does not verify (please report this importer bug):",
    ('einsum', '', 'int64', 'fwd'): "compile error: trnc cannot compile graph 'inference': internal error: the imported IR does not verify (please report this importer bug):",
    ('nn.functional.scaled_dot_product_attention', '', '*', 'bwd'): 'not lowered yet: aten.eq.Scalar',
    ('nn.functional.scaled_dot_product_attention', '', '*', 'fwd'): 'not lowered yet: aten.where.self',
    ('nn.functional.conv1d', '', 'int64', 'fwd'): "compile error: trnc cannot compile graph 'inference': internal error: the imported IR does not verify (please report this importer bug):",
    ('nn.functional.conv2d', '', 'int64', 'fwd'): "compile error: trnc cannot compile graph 'inference': internal error: the imported IR does not verify (please report this importer bug):",
    ('nn.functional.max_pool2d', '', '*', '*'): 'not lowered yet: aten.max_pool2d_with_indices.default',
    ('nn.functional.avg_pool2d', '', '*', 'fwd'): 'not lowered yet: aten.avg_pool2d.default',
    ('nn.functional.avg_pool2d', '', 'float32', 'bwd'): 'not lowered yet: aten.avg_pool2d.default',
    ('nn.functional.adaptive_avg_pool2d', '', '*', '*'): 'not lowered yet: aten._adaptive_avg_pool2d.default',
    ('nn.functional.interpolate', 'nearest', '*', '*'): 'not lowered yet: aten.index.Tensor',
    ('nn.functional.interpolate', 'bilinear', '*', '*'): 'not lowered yet: aten.clamp.default',
}
