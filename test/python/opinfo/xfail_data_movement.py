"""Expected failures of the OpInfo sweep for the data_movement area (see xfails.py for the
key format). Owned by the data_movement engineer: delete an entry when its operator lands
(the run fails on an unexpected pass); every entry says why it fails.
Seeded from a real sweep by seed_xfails.py.
"""

XFAIL = {
    ('nn.functional.embedding', '', '*', 'bwd'): 'not lowered yet: aten.embedding.default needs DmaIndirect (#14: gather/scatter rows by an int32 index tile), not implemented yet',
    ('nn.functional.embedding', '', 'bfloat16', 'fwd'): 'not lowered yet: aten.embedding_renorm.default (max_norm) needs DmaIndirect (#14: gather/scatter rows by an int32 index tile), not implemented yet',
    ('nn.functional.embedding', '', 'float32', 'fwd'): 'not lowered yet: aten.embedding.default needs DmaIndirect (#14: gather/scatter rows by an int32 index tile), not implemented yet',
    ('index_select', '', '*', '*'): 'not lowered yet: aten.index_select.default needs DmaIndirect (#14: gather/scatter rows by an int32 index tile), not implemented yet',
    ('gather', '', '*', '*'): 'not lowered yet: aten.gather.default needs DmaIndirect (#14: gather/scatter rows by an int32 index tile), not implemented yet',
    ('scatter', '', '*', 'bwd'): 'not lowered yet: aten.scatter.src needs DmaIndirect (#14: gather/scatter rows by an int32 index tile), not implemented yet',
    ('scatter', '', '*', 'fwd'): 'not lowered yet: aten.scatter.reduce needs DmaIndirect (#14: gather/scatter rows by an int32 index tile), not implemented yet',
    ('scatter_add', '', '*', '*'): 'not lowered yet: aten.scatter_add.default needs DmaIndirect (#14: gather/scatter rows by an int32 index tile), not implemented yet (duplicates accumulate by serialising rows)',
    ('index_put', '', '*', '*'): 'not lowered yet: aten.index_put.default needs DmaIndirect (#14: gather/scatter rows by an int32 index tile), not implemented yet',
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
