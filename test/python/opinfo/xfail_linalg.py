"""Expected failures of the OpInfo sweep for the linalg area (see xfails.py for the
key format): triangular solves (decomp_linalg.py) and the linalg operators that
already reduce to matmuls and reductions. Owned by the linalg engineer: delete an
entry when it passes (the run fails on an unexpected pass); every entry says why
it fails. From a full run (TRNC_OPINFO_FULL=1 ... -k linalg).
"""

_INT_MM = ("integer matmul: the Tensor Engine multiplies floating-point operands only "
           "(importer reports aten.mm unsupported)")
_INVERSE = ("negative powers invert the matrix: aten.linalg_inv_ex (a general inverse needs a "
            "pivoted LU) is not lowered; export stops first at its _linalg_check_errors node")
_SVD = ("spectral and nuclear norms (ord 2, -2, 'nuc') need singular values: "
        "aten._linalg_svd is not lowered")


def _ord_dim(s):
    ord_ = s.args[0] if s.args else s.kwargs.get("ord")
    dim = s.args[1] if len(s.args) > 1 else s.kwargs.get("dim")
    return ord_, dim


def _spectral(s) -> bool:
    """A matrix norm of ord 2, -2 or 'nuc' (PyTorch answers an empty matrix's
    2-norms without an SVD, not its nuclear norm)."""
    ord_, dim = _ord_dim(s)
    matrix = (isinstance(dim, (tuple, list)) and len(dim) == 2) or (
        dim is None and ord_ is not None and s.input.dim() == 2)
    if not matrix or not isinstance(ord_, (int, float, str)) or ord_ not in ("nuc", 2, -2):
        return False
    return ord_ == "nuc" or s.input.numel() > 0


XFAIL = {
    ("linalg.multi_dot", "", "int64", "fwd"): _INT_MM,
    ("linalg.multi_dot", "", "int32", "fwd"): _INT_MM,
}

XFAIL_SAMPLES = [
    (("linalg.matrix_power", "", "float32", "*"), lambda s: s.args[0] < 0, _INVERSE),
    (("linalg.matrix_norm", "", "float32", "*"), _spectral, _SVD),
    (("linalg.norm", "", "float32", "*"), _spectral, _SVD),
]
