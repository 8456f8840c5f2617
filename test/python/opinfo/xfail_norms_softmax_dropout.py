"""Expected failures of the OpInfo sweep for the norms_softmax_dropout area (see xfails.py for the
key format). Owned by the norms_softmax_dropout engineer: delete an entry when its operator lands
(the run fails on an unexpected pass); every entry says why it fails.
Seeded from a real sweep by seed_xfails.py.
"""

XFAIL = {
    ('softmax', '', 'float32', 'bwd'): "empty input tensor (numel 0) in a sample: the runtime refuses a null data pointer ('input 0 is a null pointer'; backend/runtime, not the lowering, which folds empty reductions to constants)",
    ('nn.functional.layer_norm', '', 'float32', 'fwd'): "empty input tensor (numel 0) in a sample: the runtime refuses a null data pointer ('input 0 is a null pointer'; backend/runtime, not the lowering, which folds empty reductions to constants)",
    ('nn.functional.rms_norm', '', '*', 'fwd'): "empty input tensor (numel 0) in a sample: the runtime refuses a null data pointer ('input 0 is a null pointer'; backend/runtime, not the lowering, which folds empty reductions to constants)",
    ('nn.functional.group_norm', '', '*', '*'): "not lowered yet: aten.as_strided.default, from PyTorch's group_norm decomposition (layout area)",
    ('nn.functional.dropout', '', 'float32', 'fwd'): 'not lowered yet: aten.native_dropout.default needs an on-device RNG (Random opcode #11, not implemented yet)',
}
