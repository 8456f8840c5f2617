"""A nanoGPT-style decoder: token + position embedding, pre-norm blocks with
causal self-attention and a GELU MLP, final LayerNorm (or an RMSNorm whose
normalisation is a trnc.nki kernel: ``GPTConfig(norm="rmsnorm_nki")``), weight-tied head,
cross-entropy loss. Follows Karpathy's nanoGPT (model.py): fused QKV
projection, ``F.scaled_dot_product_attention(is_causal=True)``, GPT-2 init.

The default config (d_model 256, 2 layers, 4 heads, vocab 512, block 128)
makes every projection contract over and produce >= 2 tiles of 128.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["GPTConfig", "GPT", "tiny"]


@dataclass
class GPTConfig:
    vocab_size: int = 512
    block_size: int = 128
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 256
    dropout: float = 0.0
    bias: bool = True
    # "layernorm" (nanoGPT's), or "rmsnorm_nki": RMSNorm whose normalisation is a
    # trnc.nki kernel (trnc/nki/kernels.py), spliced into backend="neuron" graphs.
    norm: str = "layernorm"


def norm_layer(config: GPTConfig) -> nn.Module:
    if config.norm == "rmsnorm_nki":
        from ..nki.kernels import RMSNorm

        return RMSNorm(config.n_embd)
    if config.norm != "layernorm":
        raise ValueError(f"GPTConfig.norm must be 'layernorm' or 'rmsnorm_nki', not {config.norm!r}")
    return nn.LayerNorm(config.n_embd, bias=config.bias)


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.n_head = config.n_head
        self.dropout = config.dropout
        self.resid_dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True
        )
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = norm_layer(config)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = norm_layer(config)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """``forward(idx, targets=None)`` returns (logits, loss); loss is None without targets."""

    def __init__(self, config: Optional[GPTConfig] = None) -> None:
        super().__init__()
        self.config = config = config or GPTConfig()
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.drop = nn.Dropout(config.dropout)
        self.h = nn.ModuleList([Block(config) for _ in range(config.n_layer)])
        self.ln_f = norm_layer(config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # weight tying
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):  # GPT-2's scaled residual init
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx: torch.Tensor, targets: Optional[torch.Tensor] = None):
        _, t = idx.shape
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)  # as nanoGPT
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss


def tiny() -> GPT:
    """The default config (for ``trnc compile trnc.models.gpt:tiny --input i64[4,128]``)."""
    torch.manual_seed(0)
    return GPT(GPTConfig())


def batch(config: GPTConfig, batch_size: int, generator: torch.Generator):
    """A seeded (inputs, targets) batch of a learnable synthetic sequence task:
    each token is the previous plus a per-sequence stride, modulo 64 (so the
    loss falls within a few steps, from ln(vocab) towards ln(64) and below)."""
    period = min(64, config.vocab_size)
    start = torch.randint(0, period, (batch_size, 1), generator=generator)
    stride = torch.randint(1, 8, (batch_size, 1), generator=generator)
    seq = (start + stride * torch.arange(config.block_size + 1)) % period
    return seq[:, :-1].contiguous(), seq[:, 1:].contiguous()
