"""Expected failures of the OpInfo sweep for the data_movement area (see xfails.py for the
key format). Owned by the data_movement engineer: delete an entry when its operator lands
(the run fails on an unexpected pass); every entry says why it fails.
Seeded from a real sweep by seed_xfails.py.
"""

import torch
from xfail_predicates import at

XFAIL = {
}


def _has_uint8_tensor(sample) -> bool:
    values = (sample.input, *sample.args, *sample.kwargs.values())
    return any(isinstance(v, torch.Tensor) and v.dtype == torch.uint8 for v in values)


def _long_sort_row(sample) -> bool:
    """sort/argsort decompose rows of <= 256 elements only (trnc.decomp_indices)."""
    x = sample.input
    dim = sample.kwargs.get('dim', sample.args[0] if sample.args else -1)
    return x.dim() > 0 and x.shape[dim] > 256


def _topk_tie_order_differs(sample) -> bool:
    """PyTorch's CPU topk orders tied values as its partial sort leaves them;
    trnc takes the first occurrence (a stable sort's order)."""
    x, args = sample.input, list(sample.args)
    k = args[0]
    dim = args[1] if len(args) > 1 else sample.kwargs.get('dim', -1)
    largest = args[2] if len(args) > 2 else sample.kwargs.get('largest', True)
    if x.dim() == 0:
        return False
    first = torch.sort(x, dim=dim, descending=largest, stable=True).indices.narrow(dim, 0, k)
    return not torch.equal(torch.topk(x, k, dim, largest).indices, first)


def _one_hot_without_num_classes(sample) -> bool:
    return (sample.args[0] if sample.args else sample.kwargs.get('num_classes', -1)) == -1


def _has_bool_index(sample) -> bool:
    indices = sample.args[0] if sample.args else ()
    return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in indices or ())


def _reads_outside_its_input(s) -> bool:
    """as_strided of a partial view reading storage before or past the view's elements."""
    size, stride = s.args[0], s.args[1]
    offset = s.args[2] if len(s.args) > 2 and s.args[2] is not None else s.kwargs.get(
        "storage_offset", s.input.storage_offset())
    start = offset - s.input.storage_offset()
    last = start + sum((n - 1) * st for n, st in zip(size, stride))
    return start < 0 or last >= s.input.numel()


XFAIL_SAMPLES = [
    *[(('as_strided', 'partial_views', '*', mode), _reads_outside_its_input,
       "as_strided of a view reading its base's storage outside the view: trnc's graph values have no "
       "storage beyond the view's elements (refused by name, decomp_strided)") for mode in ('fwd', 'bwd')],
    (('sort', '', '*', '*'), _long_sort_row,
     'a row of more than 256 elements: the rank sort compares all pairs of a row, so longer rows are not decomposed (reported unsupported: aten.sort)'),
    (('argsort', '', '*', 'fwd'), _long_sort_row,
     'a row of more than 256 elements: the rank sort compares all pairs of a row, so longer rows are not decomposed (reported unsupported: aten.sort)'),
    (('topk', '', '*', '*'), _topk_tie_order_differs,
     "tied values: PyTorch's CPU topk returns them in its partial sort's order (e.g. the later index first); trnc takes the first occurrence; values match"),
    (('nn.functional.one_hot', '', '*', 'fwd'), _one_hot_without_num_classes,
     'num_classes=-1: the number of classes is max(x) + 1, a data-dependent shape; trnc compiles static shapes only'),
    (('gather', '', '*', '*'), _has_uint8_tensor,
     'samples with an empty uint8 index (gather reads nothing): trnc has no uint8 tensors, so the graph input is refused'),
    (('scatter', '', '*', 'fwd'), lambda s: s.kwargs.get('reduce') == 'multiply',
     "scatter(reduce='multiply'): DmaIndirect writes or adds rows; there is no multiplying scatter (reported unsupported: aten.scatter.reduce)"),
    (('index_put', '', '*', 'bwd'), _has_bool_index,
     'a bool-mask index: the backward reads x[mask], whose size depends on the data (symbolic shape); trnc compiles static shapes only'),
    (('narrow', '', '*', '*'), lambda s: isinstance(s.args[1], torch.Tensor),
     'narrow with a tensor start is data-dependent (symbolic shape from .item()); trnc compiles static shapes only'),
]
