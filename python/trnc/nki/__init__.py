"""trnc.nki: NKI-compatible kernels that run on trnc's timed NeuronCore simulator.

A kernel written for AWS NKI needs only its imports changed::

    import trnc.nki as nki
    import trnc.nki.language as nl
    import trnc.nki.isa as nisa

    @nki.jit
    def add(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.add(nl.load(a), nl.load(b)))
        return out

    c = add(x, y)                          # torch tensors in, torch tensors out
    r = nki.benchmark(add, x, y)           # simulated latency + profile
    print(r.latency_us, r.profile.summary())

Kernels trace (loops unroll in Python) into nisa instructions, which the compiler's
``trnc-compile-kernel`` pipeline schedules, allocates and synchronises; the artifact
runs on the same simulator as compiled graphs. ``nki.custom_op(kernel)`` makes a
torch custom op of a kernel that ``torch.compile(backend="neuron")`` lowers inside
the graph. Times are simulated estimates, not measurements. docs/nki.md has the
supported API.
"""

from . import isa, language
from ._custom_op import custom_op
from ._kernel import BenchmarkResult, Kernel, benchmark, jit
from ._tracer import NkiError

__all__ = ["jit", "benchmark", "custom_op", "Kernel", "BenchmarkResult", "NkiError", "language", "isa"]
