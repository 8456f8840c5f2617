"""Expected failures of the OpInfo sweep for the data_movement area (see xfails.py for the
key format). Owned by the data_movement engineer: delete an entry when its operator lands
(the run fails on an unexpected pass); every entry says why it fails.
Seeded from a real sweep by seed_xfails.py.
"""

import torch

XFAIL = {
    ('narrow', '', 'float32', 'fwd'): 'narrow with a tensor start is data-dependent (symbolic shape u3 from .item()); trnc compiles static shapes only',
    ('topk', '', 'int64', 'fwd'): "ties: PyTorch's CPU topk orders equal values as its partial sort leaves them (here the later index first); trnc takes the first occurrence; values match",
    ('narrow', '', 'int64', 'fwd'): 'narrow with a tensor start is data-dependent (symbolic shape u3 from .item()); trnc compiles static shapes only',
}


def _has_uint8_tensor(sample) -> bool:
    values = (sample.input, *sample.args, *sample.kwargs.values())
    return any(isinstance(v, torch.Tensor) and v.dtype == torch.uint8 for v in values)


def _has_bool_index(sample) -> bool:
    indices = sample.args[0] if sample.args else ()
    return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in indices or ())


XFAIL_SAMPLES = [
    (('gather', '', '*', '*'), _has_uint8_tensor,
     'samples with an empty uint8 index (gather reads nothing): trnc has no uint8 tensors, so the graph input is refused'),
    (('scatter', '', '*', 'fwd'), lambda s: s.kwargs.get('reduce') == 'multiply',
     "scatter(reduce='multiply'): DmaIndirect writes or adds rows; there is no multiplying scatter (reported unsupported: aten.scatter.reduce)"),
    (('index_put', '', '*', 'bwd'), _has_bool_index,
     'a bool-mask index: the backward reads x[mask], whose size depends on the data (symbolic shape); trnc compiles static shapes only'),
]
