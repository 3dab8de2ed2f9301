"""Images as token sequences, the Vision Transformer way (chapter 9).

A ViT cuts an image into non-overlapping square patches and flattens each patch into one vector;
a linear map then turns each vector into a token. Nothing else changes: the encoder sees a
sequence of ``(H / p) · (W / p)`` tokens.

* :func:`patchify` / :func:`unpatchify` — image ``(H, W, C)`` ↔ patches ``(n_patches, p·p·C)``,
  patches in row-major (reading) order, each flattened row by row, channels last.
* :func:`patch_count` — tokens for an image side and a patch side.
* :func:`synthetic_image` — a deterministic test picture (no downloads).
"""

from __future__ import annotations

import math

import torch

from tformer._validate import Tensorish, as_float_tensor


def patch_count(image_size: int, patch_size: int) -> int:
    """Number of tokens ``(image_size / patch_size)²`` for a square image; sides must divide."""
    if patch_size < 1 or image_size % patch_size:
        raise ValueError(
            f"patch_size = {patch_size} must divide image_size = {image_size} "
            f"(divisors: {[p for p in range(1, image_size + 1) if image_size % p == 0]})"
        )
    return (image_size // patch_size) ** 2


def patchify(image: Tensorish, patch_size: int) -> torch.Tensor:
    """Cut ``image`` ``(H, W, C)`` into ``(H/p · W/p, p·p·C)`` flattened patches (reading order)."""
    image = as_float_tensor(image, "image")
    if image.ndim != 3:
        raise ValueError(f"image must have shape (H, W, C), got {tuple(image.shape)}")
    height, width, channels = image.shape
    if patch_size < 1 or height % patch_size or width % patch_size:
        raise ValueError(
            f"patch_size = {patch_size} must divide both image sides {height} × {width}"
        )
    p = patch_size
    grid = image.reshape(height // p, p, width // p, p, channels)  # (rows, p, cols, p, C)
    return grid.permute(0, 2, 1, 3, 4).reshape(-1, p * p * channels)


def unpatchify(patches: Tensorish, patch_size: int, height: int, width: int) -> torch.Tensor:
    """Inverse of :func:`patchify`: ``(n_patches, p·p·C)`` → image ``(H, W, C)``."""
    patches = as_float_tensor(patches, "patches")
    p = patch_size
    if patches.ndim != 2 or patches.shape[0] != (height // p) * (width // p):
        raise ValueError(
            f"patches must have shape ({(height // p) * (width // p)}, p·p·C), "
            f"got {tuple(patches.shape)}"
        )
    channels = patches.shape[1] // (p * p)
    grid = patches.reshape(height // p, width // p, p, p, channels).permute(0, 2, 1, 3, 4)
    return grid.reshape(height, width, channels)


def synthetic_image(size: int = 224) -> torch.Tensor:
    """A deterministic RGB test picture ``(size, size, 3)`` in [0, 1]: sky, sun, hills, a house."""
    coords = torch.linspace(0, 1, size)
    y, x = torch.meshgrid(coords, coords, indexing="ij")
    image = torch.stack([0.55 + 0.3 * y, 0.75 + 0.15 * y, torch.ones_like(y)], dim=-1)  # sky
    sun = (x - 0.78) ** 2 + (y - 0.22) ** 2 < 0.1**2
    image[sun] = torch.tensor([1.0, 0.8, 0.2])
    hill = y > 0.62 + 0.08 * torch.sin(2 * math.pi * 1.3 * x)
    image[hill] = torch.stack([0.2 + 0.1 * x, 0.55 + 0.15 * y, 0.25 * torch.ones_like(x)], -1)[hill]
    wall = (x > 0.18) & (x < 0.42) & (y > 0.48) & (y < 0.72)
    image[wall] = torch.tensor([0.85, 0.35, 0.25])
    roof = (y > 0.32) & (y <= 0.48) & ((x - 0.30).abs() < (y - 0.32) * 0.9)
    image[roof] = torch.tensor([0.35, 0.2, 0.15])
    door = (x > 0.27) & (x < 0.33) & (y > 0.6) & (y < 0.72)
    image[door] = torch.tensor([0.25, 0.15, 0.1])
    return image.clamp(0, 1)
