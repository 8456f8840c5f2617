"""Expected failures of the OpInfo sweep for the reductions area (see xfails.py for the
key format). Owned by the reductions engineer: delete an entry when its operator lands
(the run fails on an unexpected pass); every entry says why it fails.
Seeded from a real sweep by seed_xfails.py.
"""

XFAIL = {
    ('sum', '', 'bool', 'fwd'): "unsupported dtype: trnc cannot compile graph 'inference': 2 tensors have unsupported dtypes (trnc computes in float32, bfloat16 and float16)",
    ('sum', '', 'int64', 'fwd'): "unsupported dtype: trnc cannot compile graph 'inference': 2 tensors have unsupported dtypes (trnc computes in float32, bfloat16 and float16)",
    ('mean', '', '*', 'bwd'): 'not lowered yet: aten.mean.dim',
    ('mean', '', 'bfloat16', 'fwd'): 'not lowered yet: aten.mean.default',
    ('mean', '', 'float32', 'fwd'): 'not lowered yet: aten.mean.dim',
    ('amax', '', '*', '*'): 'not lowered yet: aten.amax.default',
    ('amin', '', '*', '*'): 'not lowered yet: aten.amin.default',
    ('max', 'reduction_with_dim', '*', '*'): 'not lowered yet: aten.max.dim',
    ('min', 'reduction_with_dim', '*', '*'): 'not lowered yet: aten.min.dim',
    ('max', 'reduction_no_dim', '*', '*'): 'not lowered yet: aten.max.default',
    ('min', 'reduction_no_dim', '*', '*'): 'not lowered yet: aten.min.default',
    ('argmax', '', '*', '*'): 'not lowered yet: aten.argmax.default',
    ('argmin', '', '*', '*'): 'not lowered yet: aten.argmin.default',
    ('prod', '', '*', 'bwd'): 'not lowered yet: aten.prod.dim_int',
    ('prod', '', 'bfloat16', 'fwd'): 'not lowered yet: aten.prod.dim_int',
    ('prod', '', 'bool', 'fwd'): 'not lowered yet: aten.prod.default',
    ('prod', '', 'float32', 'fwd'): 'not lowered yet: aten.prod.dim_int',
    ('prod', '', 'int64', 'fwd'): 'not lowered yet: aten.prod.default',
    ('var', '', '*', '*'): 'not lowered yet: aten.var.correction',
    ('std', '', '*', '*'): 'not lowered yet: aten.var.correction',
    ('any', '', 'bfloat16', 'fwd'): 'not lowered yet: aten.any.default',
    ('any', '', 'bool', 'fwd'): 'not lowered yet: aten.any.dim',
    ('any', '', 'float32', 'fwd'): 'not lowered yet: aten.any.dims',
    ('any', '', 'int64', 'fwd'): 'not lowered yet: aten.any.dim',
    ('all', '', '*', '*'): 'not lowered yet: aten.logical_not.default',
    ('logsumexp', '', '*', '*'): 'not lowered yet: aten.amax.default',
    ('cumsum', '', '*', '*'): 'not lowered yet: aten.cumsum.default',
    ('cumprod', '', '*', '*'): 'not lowered yet: aten.cumprod.default',
    ('norm', '', '*', '*'): 'not lowered yet: aten.linalg_vector_norm.default',
    ('linalg.vector_norm', '', '*', '*'): 'not lowered yet: aten.linalg_vector_norm.default',
}
