"""Model definitions in plain ``torch.nn`` (no torchvision dependency): image CNNs and a
GPT-style decoder whose size is set by flags (the model that needs FSDP)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional

from trainer.errors import UserError


@dataclass(frozen=True)
class ModelSpec:
    """Default input geometry of a model."""

    channels: int
    image_size: int
    num_classes: int


SPECS: dict[str, ModelSpec] = {
    "simplecnn": ModelSpec(channels=1, image_size=28, num_classes=10),
    "resnet18": ModelSpec(channels=3, image_size=224, num_classes=1000),
    "resnet50": ModelSpec(channels=3, image_size=224, num_classes=1000),
}


class SimpleCNN(nn.Module):
    """The classic MNIST network: two 3x3 convolutions, max-pool, dropout, two linear layers."""

    def __init__(self, channels: int = 1, image_size: int = 28, num_classes: int = 10) -> None:
        super().__init__()
        if image_size < 6:
            raise UserError(f"simplecnn needs --image-size >= 6, got {image_size}")
        self.conv1 = nn.Conv2d(channels, 32, kernel_size=3)
        self.conv2 = nn.Conv2d(32, 64, kernel_size=3)
        self.pool = nn.MaxPool2d(2)
        self.dropout1 = nn.Dropout(0.25)
        side = (image_size - 4) // 2
        self.fc1 = nn.Linear(64 * side * side, 128)
        self.dropout2 = nn.Dropout(0.5)
        self.fc2 = nn.Linear(128, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        x = self.dropout1(self.pool(x))
        x = torch.flatten(x, 1)
        x = self.dropout2(torch.relu(self.fc1(x)))
        return self.fc2(x)


def _conv3x3(cin: int, cout: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, kernel_size=3, stride=stride, padding=1, bias=False)


def _conv1x1(cin: int, cout: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with a residual connection (ResNet-18/34)."""

    expansion = 1

    def __init__(self, cin: int, width: int, stride: int = 1) -> None:
        super().__init__()
        cout = width * self.expansion
        self.conv1 = _conv3x3(cin, width, stride)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = _conv3x3(width, cout)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(_conv1x1(cin, cout, stride), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + self.shortcut(x))


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (strided), 1x1 expand, with a residual connection (ResNet-50+)."""

    expansion = 4

    def __init__(self, cin: int, width: int, stride: int = 1) -> None:
        super().__init__()
        cout = width * self.expansion
        self.conv1 = _conv1x1(cin, width)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = _conv3x3(width, width, stride)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = _conv1x1(width, cout)
        self.bn3 = nn.BatchNorm2d(cout)
        # Zero-init the last BN so every block starts as the identity (stabilises training).
        nn.init.zeros_(self.bn3.weight)
        self.relu = nn.ReLU(inplace=True)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(_conv1x1(cin, cout, stride), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    """ImageNet-style ResNet: 7x7 stem, four stages, global average pool, linear classifier."""

    def __init__(
        self,
        block: type[BasicBlock] | type[Bottleneck],
        layers: tuple[int, int, int, int],
        channels: int = 3,
        num_classes: int = 1000,
    ) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(channels, 64, kernel_size=7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, padding=1),
        )
        stages: list[nn.Module] = []
        cin = 64
        for i, (width, blocks) in enumerate(zip((64, 128, 256, 512), layers, strict=True)):
            stride = 1 if i == 0 else 2
            stage: list[nn.Module] = []
            for j in range(blocks):
                stage.append(block(cin, width, stride if j == 0 else 1))
                cin = width * block.expansion
            stages.append(nn.Sequential(*stage))
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


@dataclass(frozen=True)
class GPTShape:
    """Size of the decoder: parameters ~ 12 * layers * dim^2 + (2 * vocab + seq_len) * dim."""

    vocab_size: int
    seq_len: int
    layers: int
    dim: int
    heads: int

    def params(self) -> int:
        d = self.dim
        block = 12 * d * d + 13 * d  # qkv + proj + 2 MLP matrices, their biases, 2 LayerNorms
        return self.layers * block + (2 * self.vocab_size + self.seq_len) * d + 2 * d


class Block(nn.Module):
    """Pre-LayerNorm transformer block: causal self-attention, then a 4x GELU MLP."""

    def __init__(self, dim: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        p = self.dropout if self.training else 0.0
        a = functional.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        x = x + self.drop(self.proj(a.transpose(1, 2).reshape(b, t, d)))
        return x + self.drop(self.out(functional.gelu(self.fc(self.ln2(x)))))


class GPT(nn.Module):
    """A GPT-2-style decoder (learned positions, untied head) for next-token prediction.

    ``blocks`` are the units FSDP shards one by one (see :func:`fsdp_units`).
    """

    def __init__(self, shape: GPTShape, dropout: float = 0.0) -> None:
        super().__init__()
        self.shape = shape
        self.tok = nn.Embedding(shape.vocab_size, shape.dim)
        self.pos = nn.Embedding(shape.seq_len, shape.dim)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            Block(shape.dim, shape.heads, dropout) for _ in range(shape.layers)
        )
        self.ln_f = nn.LayerNorm(shape.dim)
        self.head = nn.Linear(shape.dim, shape.vocab_size, bias=False)
        # GPT-2's initialisation; residual projections scaled down by depth.
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                residual = name.endswith(("proj.weight", "out.weight"))
                std = 0.02 / math.sqrt(2 * shape.layers) if residual else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        x = self.drop(self.tok(idx) + self.pos(pos))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def fsdp_units(model: nn.Module) -> list[nn.Module]:
    """Sub-modules to shard as their own FSDP units before the root (GPT: each block)."""
    if isinstance(model, GPT):
        return list(model.blocks)
    return []


def build_model(name: str, channels: int, image_size: int, num_classes: int) -> nn.Module:
    """Build one of the image models of :data:`SPECS` by name."""
    if name == "simplecnn":
        return SimpleCNN(channels, image_size, num_classes)
    if image_size < 32:
        raise UserError(f"{name} needs --image-size >= 32, got {image_size}")
    if name == "resnet18":
        return ResNet(BasicBlock, (2, 2, 2, 2), channels, num_classes)
    if name == "resnet50":
        return ResNet(Bottleneck, (3, 4, 6, 3), channels, num_classes)
    raise UserError(f"unknown model {name!r}; choose one of {', '.join(SPECS)}")
