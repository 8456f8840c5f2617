"""Small reference models that train through ``backend="neuron"`` (issue 5).

Sized for the CPU-hosted simulator, but large enough that every matmul spans
several 128-partition tiles: ``gpt.GPT`` (a nanoGPT-style decoder) and
``resnet.ResNet`` (a small ResNet-style CNN). Tests, the demo and
``trnc compile trnc.models.gpt:tiny`` use them.
"""

from .gpt import GPT, GPTConfig
from .resnet import ResNet

__all__ = ["GPT", "GPTConfig", "ResNet"]
