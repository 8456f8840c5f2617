"""Small models for test_cli.py: `trnc compile cli_fixtures.models:<factory>`."""

import torch


class MLP(torch.nn.Module):
    def __init__(self, d_in: int = 32, d_hidden: int = 64, d_out: int = 16) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(d_in, d_hidden)
        self.fc2 = torch.nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def make_mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    return MLP()


class Unsupported(torch.nn.Module):
    """Uses an operator the compiler has no lowering for."""

    def forward(self, x):
        return torch.special.bessel_j0(x)  # unsupported (no lowering)


def make_unsupported() -> torch.nn.Module:
    return Unsupported()


def make_not_a_module():
    return 42
