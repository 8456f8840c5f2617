"""Registers trnc's names with ``torch._logging`` while torch is being imported.

``TORCH_LOGS`` is parsed once, at the end of ``import torch``, and an unknown
name there makes ``import torch`` itself fail. torch loads the ``torch.backends``
entry points (its out-of-tree extension hook) just before that parse, and this
module is trnc's: it only registers the ``trnc`` log and the ``trnc_graph`` /
``trnc_ir`` artifacts, so ``TORCH_LOGS=trnc,trnc_graph,trnc_ir`` works from the
first line of a program. It must stay tiny and must not import ``trnc`` (whose
package imports torch, still half-initialised here). trnc.logs registers the same
names again when trnc is imported, for a torch loaded with
TORCH_DEVICE_BACKEND_AUTOLOAD=0.
"""

ARTIFACTS = {
    "trnc_graph": "The graph JSON of each graph trnc compiles (docs/graph-json.md)",
    "trnc_ir": "The IR of each graph trnc compiles after each compiler phase",
}


def register() -> None:
    """Register the ``trnc`` log and its artifacts (idempotent). Never raises: an
    error here would make ``import torch`` itself fail (torch re-raises errors of
    its extension hooks); without the names, torch rejects TORCH_LOGS=trnc* with
    its own message instead."""
    try:
        from torch._logging import _internal

        _internal.register_log("trnc", "trnc")
        for name, description in ARTIFACTS.items():
            _internal.register_artifact(name, description, off_by_default=True)
    except Exception:  # noqa: BLE001 (see above)
        pass
