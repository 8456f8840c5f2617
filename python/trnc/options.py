"""Compile options: what the user can pass as ``torch.compile(options=...)``.

A small frozen dataclass, validated on construction (the target against the
machine models the extension knows) and serialised to the JSON that
``trnc::CompileOptions::fromJson`` parses.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Mapping, Optional

from ._native import available, native
from .errors import TrncError

__all__ = ["CompilerOptions", "DEFAULT_TARGET"]

DEFAULT_TARGET = "trn2"


@dataclasses.dataclass(frozen=True)
class CompilerOptions:
    """Options of one compilation.

    Attributes:
        target: NeuronCore generation (``trn1``, ``trn2``, ``trn3``).
        dump_dir: when set, a failing graph's JSON and input IR are written
            there, and the error carries the command that reproduces it.
            Defaults to ``$TRNC_DUMP_DIR`` when that is set.
        cache: read and write the artifact cache (docs/cache.md); also turned
            off by ``TRNC_DISABLE_CACHE=1``.
        cache_dir: the cache directory for this compile (else
            ``$TRNC_CACHE_DIR``, else ``~/.cache/trnc``).
        lnc: logical NeuronCore degree, the physical cores one program
            spans: 1 or 2. 2 is refused on targets with one physical core
            per logical core (trn1), naming the target; on trn2/trn3 the
            compiler splits the program over two physical cores
            (docs/distributed.md, "LNC=2").

    ``cache`` and ``cache_dir`` only say where to cache: they are not part of
    the cache key, nor of the JSON the compiler reads. ``lnc`` is in the
    JSON (and so the key) when it is 2; lnc=1 is what the JSON without it
    means, so lnc=1 keys are those of before the option.
    """

    target: str = DEFAULT_TARGET
    dump_dir: Optional[str] = None
    cache: bool = True
    cache_dir: Optional[str] = None
    lnc: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.target, str):
            raise TrncError(f"trnc: option 'target' must be a string, got {self.target!r}")
        if not isinstance(self.cache, bool):
            raise TrncError(f"trnc: option 'cache' must be True or False, got {self.cache!r}")
        if self.cache_dir is not None and not isinstance(self.cache_dir, (str, os.PathLike)):
            raise TrncError(f"trnc: option 'cache_dir' must be a path, got {self.cache_dir!r}")
        if self.lnc not in (1, 2) or isinstance(self.lnc, bool):
            raise TrncError(f"trnc: option 'lnc' must be 1 or 2 (the Neuron LNC degrees), got {self.lnc!r}")
        # Validation needs the extension; without it compilation fails later
        # with the "not built" message anyway.
        if available():
            known = list(native().known_targets())
            if self.target not in known:
                raise TrncError(
                    f"trnc: unknown target '{self.target}'; known targets: {', '.join(known)}"
                )
            max_lnc = native().target_max_lnc(self.target)
            if self.lnc > max_lnc:
                raise TrncError(
                    f"trnc: option lnc={self.lnc} is not supported on {self.target}: its logical "
                    f"NeuronCores are {max_lnc} physical core (Neuron NCC_EARG001); use lnc=1 "
                    "or a trn2/trn3 target"
                )

    @classmethod
    def from_mapping(cls, options: Optional[Mapping[str, Any]]) -> "CompilerOptions":
        """Build from a ``torch.compile(options=...)`` dict; unknown keys are errors."""
        options = dict(options or {})
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(options) - names)
        if unknown:
            raise TrncError(
                f"trnc: unknown option(s) {', '.join(unknown)}; known options: {', '.join(sorted(names))}"
            )
        if options.get("dump_dir") is None and os.environ.get("TRNC_DUMP_DIR"):
            options["dump_dir"] = os.environ["TRNC_DUMP_DIR"]
        return cls(**options)

    def to_json(self) -> str:
        """The JSON ``trnc::CompileOptions::fromJson`` expects."""
        doc: dict[str, Any] = {"target": self.target}
        if self.dump_dir:
            doc["dump_dir"] = self.dump_dir
        if self.lnc != 1:
            doc["lnc"] = str(self.lnc)
        return json.dumps(doc, sort_keys=True)
