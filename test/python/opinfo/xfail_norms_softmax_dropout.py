"""Expected failures of the OpInfo sweep for the norms_softmax_dropout area (see xfails.py for the
key format). Owned by the norms_softmax_dropout engineer: delete an entry when its operator lands
(the run fails on an unexpected pass); every entry says why it fails.
Seeded from a real sweep by seed_xfails.py.
"""

XFAIL = {
    ('softmax', '', '*', '*'): 'not lowered yet: aten._softmax.default',
    ('log_softmax', '', '*', '*'): 'not lowered yet: aten._log_softmax.default',
    ('nn.functional.layer_norm', '', '*', '*'): 'not lowered yet: aten.native_layer_norm.default',
    ('nn.functional.rms_norm', '', '*', '*'): 'not lowered yet: aten.pow.Tensor_Scalar',
    ('nn.functional.batch_norm', '', '*', 'bwd'): 'not lowered yet: aten._native_batch_norm_legit_no_training.default',
    ('nn.functional.batch_norm', '', '*', 'fwd'): 'not lowered yet: aten._native_batch_norm_legit_functional.default',
    ('nn.functional.group_norm', '', '*', '*'): 'not lowered yet: aten.native_group_norm.default',
}
