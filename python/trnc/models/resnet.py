"""A small ResNet-style CNN in the CIFAR ResNet layout (He et al. 2016, sec.
4.2): a 3x3 conv + batch-norm + ReLU stem, two residual stages of basic
blocks (the second downsamples with a strided conv and a 1x1 projection
shortcut), global average pooling, a linear head. ``stem_pool=True`` adds the
ImageNet layout's 2x2 max pooling after the stem (max_pool2d_with_indices is
not lowered yet: see docs/decompositions.md).

Default input [B, 3, 16, 16], widths 32 and 64: the 3x3 convs contract over
9 * 32 = 288 and 9 * 64 = 576 terms, i.e. several 128-partition tiles.
"""

from __future__ import annotations

from typing import Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["BasicBlock", "ResNet", "batch"]


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, widths: Sequence[int] = (32, 64), num_classes: int = 10, in_channels: int = 3,
                 stem_pool: bool = False) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, widths[0], 3, padding=1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU(),
            *([nn.MaxPool2d(2)] if stem_pool else []),
        )
        stages, cin = [], widths[0]
        for i, w in enumerate(widths):
            stages.append(BasicBlock(cin, w, stride=1 if i == 0 else 2))
            cin = w
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.stages(self.stem(x))), 1))


def batch(batch_size: int, generator: torch.Generator, size: int = 16, num_classes: int = 10):
    """Seeded synthetic images: class templates plus noise."""
    templates = torch.randn(num_classes, 3, size, size, generator=torch.Generator().manual_seed(99))
    y = torch.randint(0, num_classes, (batch_size,), generator=generator)
    x = templates[y] + 0.5 * torch.randn(batch_size, 3, size, size, generator=generator)
    return x, y
