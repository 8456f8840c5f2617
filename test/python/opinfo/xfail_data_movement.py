"""Expected failures of the OpInfo sweep for the data_movement area (see xfails.py for the
key format). Owned by the data_movement engineer: delete an entry when its operator lands
(the run fails on an unexpected pass); every entry says why it fails.
Seeded from a real sweep by seed_xfails.py.
"""

XFAIL = {
    ('gather', '', 'float32', 'fwd'): 'samples with an empty uint8 index (gather reads nothing): trnc has no uint8 tensors, so the graph input is refused',
    ('gather', '', 'bfloat16', 'bwd'): 'samples with an empty uint8 index (gather reads nothing): trnc has no uint8 tensors, so the graph input is refused',
    ('gather', '', 'bool', 'fwd'): 'samples with an empty uint8 index (gather reads nothing): trnc has no uint8 tensors, so the graph input is refused',
    ('narrow', '', 'float32', 'fwd'): 'narrow with a tensor start is data-dependent (symbolic shape u3 from .item()); trnc compiles static shapes only',
    ('narrow', '', 'int64', 'fwd'): 'narrow with a tensor start is data-dependent (symbolic shape u3 from .item()); trnc compiles static shapes only',
    ('tril', '', 'bool', 'fwd'): 'not lowered yet: aten.tril.default on int/bool (affine_select tiles are float only for now)',
    ('tril', '', 'int64', 'fwd'): 'not lowered yet: aten.tril.default on int/bool (affine_select tiles are float only for now)',
    ('triu', '', 'bool', 'fwd'): 'not lowered yet: aten.triu.default on int/bool (affine_select tiles are float only for now)',
    ('triu', '', 'int64', 'fwd'): 'not lowered yet: aten.triu.default on int/bool (affine_select tiles are float only for now)',
    ('arange', '', 'int64', 'fwd'): 'not lowered yet: integer aten.arange.start_step (iota writes fp32 tiles; integer results pending)',
    ('nn.functional.one_hot', '', '*', '*'): 'not lowered yet: aten._assert_async.msg (one_hot with data-dependent num_classes; also needs a compare with an iota)',
    ('topk', '', '*', '*'): 'not lowered yet: aten.topk.default (no on-engine sort yet; planned: repeated max + mask for small k)',
    ('sort', '', '*', 'bwd'): 'not lowered yet: aten.sort.stable (no on-engine sort yet; planned: bitonic compare/select network on Vector)',
    ('sort', '', 'bfloat16', 'fwd'): 'not lowered yet: aten.sort.stable (no on-engine sort yet; planned: bitonic compare/select network on Vector)',
    ('sort', '', 'bool', 'fwd'): 'not lowered yet: aten.sort.stable (no on-engine sort yet; planned: bitonic compare/select network on Vector)',
    ('sort', '', 'float32', 'fwd'): 'not lowered yet: aten.sort.default (no on-engine sort yet; planned: bitonic compare/select network on Vector)',
    ('sort', '', 'int64', 'fwd'): 'not lowered yet: aten.sort.stable (no on-engine sort yet; planned: bitonic compare/select network on Vector)',
    ('argsort', '', 'bfloat16', 'fwd'): 'not lowered yet: aten.sort.default (no on-engine sort yet; planned: bitonic compare/select network on Vector)',
    ('argsort', '', 'bool', 'fwd'): 'not lowered yet: aten.sort.default (no on-engine sort yet; planned: bitonic compare/select network on Vector)',
    ('argsort', '', 'float32', 'fwd'): 'not lowered yet: aten.sort.stable (no on-engine sort yet; planned: bitonic compare/select network on Vector)',
    ('argsort', '', 'int64', 'fwd'): 'not lowered yet: aten.sort.default (no on-engine sort yet; planned: bitonic compare/select network on Vector)',
}
