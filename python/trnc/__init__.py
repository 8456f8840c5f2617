"""trnc: a torch.compile backend ("neuron") for AWS Trainium NeuronCores.

Graphs are compiled by trnc's MLIR compiler and run on the bundled NeuronCore
simulator (nothing executes on Trainium hardware).

    model = torch.compile(model, backend="neuron", dynamic=False)
"""

from . import indirect_ops  # defines torch.ops.trnc.gather_rows / scatter_rows
from .backend import neuron
from .errors import CompileError, TrncError, UnsupportedOperatorError
from .options import CompilerOptions
from . import profiling
from .profiling import last_profile
from .support import SupportReport, check_support

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "neuron",
    "TrncError",
    "CompileError",
    "UnsupportedOperatorError",
    "CompilerOptions",
    "profiling",
    "last_profile",
    "check_support",
    "SupportReport",
]
