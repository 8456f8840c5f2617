"""Expected failures of the OpInfo sweep for the reductions area (see xfails.py for the
key format). Owned by the reductions engineer: delete an entry when its operator lands
(the run fails on an unexpected pass); every entry says why it fails.
Seeded from a real sweep by seed_xfails.py.
"""

XFAIL = {
    ('max', 'reduction_with_dim', '*', '*'): 'not lowered yet: aten.max.dim (values and int64 indices): needs an index per row (iota == max, then a min over the masked iota)',
    ('min', 'reduction_with_dim', '*', '*'): 'not lowered yet: aten.min.dim (values and int64 indices), as max.dim',
    ('argmax', '', '*', '*'): 'not lowered yet: aten.argmax.default (the index half of max.dim)',
    ('argmin', '', '*', '*'): 'not lowered yet: aten.argmin.default (the index half of min.dim)',
    ('cumprod', '', 'float32', 'bwd'): 'not lowered yet: the backward of cumprod uses aten.max.dim (see max)',
}
