"""Expected failures of the OpInfo sweep for the norms_softmax_dropout area (see xfails.py for the
key format). Owned by the norms_softmax_dropout engineer: delete an entry when its operator lands
(the run fails on an unexpected pass); every entry says why it fails.
Seeded from a real sweep by seed_xfails.py.
"""

XFAIL = {
    ('softmax', '', 'float32', 'bwd'): "compile error: node '_softmax': error: 'trn.softmax' op softmax over an empty tensor is unsupported",
    ('log_softmax', '', '*', 'bwd'): 'not lowered yet: aten.exp.default',
    ('nn.functional.layer_norm', '', '*', '*'): 'not lowered yet: aten.rsqrt.default',
    ('nn.functional.rms_norm', '', '*', '*'): 'not lowered yet: aten.pow.Tensor_Scalar',
    ('nn.functional.batch_norm', '', '*', 'bwd'): 'not lowered yet: aten.sqrt.default',
    ('nn.functional.batch_norm', '', '*', 'fwd'): 'not lowered yet: aten.rsqrt.default',
    ('nn.functional.group_norm', '', '*', '*'): 'not lowered yet: aten.rsqrt.default',
    ('nn.functional.dropout', '', 'float32', 'fwd'): 'not lowered yet: aten.native_dropout.default',
}
