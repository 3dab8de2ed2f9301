"""tformer.vision: patches against torch's own unfold, the ViT numbers, errors."""

import pytest
import torch
from torch.nn import functional as F

from tformer.vision import patch_count, patchify, synthetic_image, unpatchify


def test_patchify_matches_unfold():
    torch.manual_seed(0)
    image = torch.randn(12, 8, 3)
    patches = patchify(image, 4)
    # unfold works on (N, C, H, W) and flattens channel-first; reorder to channels-last
    reference = F.unfold(image.permute(2, 0, 1)[None], kernel_size=4, stride=4)[0]  # (C·p·p, L)
    reference = reference.T.reshape(-1, 3, 4, 4).permute(0, 2, 3, 1).reshape(-1, 48)
    torch.testing.assert_close(patches, reference)
    torch.testing.assert_close(unpatchify(patches, 4, 12, 8), image)


def test_vit_numbers():
    image = synthetic_image(224)
    assert image.shape == (224, 224, 3) and image.min() >= 0 and image.max() <= 1
    assert patchify(image, 16).shape == (196, 768) == (patch_count(224, 16), 16 * 16 * 3)
    assert patch_count(224, 14) == 256


def test_errors():
    with pytest.raises(ValueError, match="must divide"):
        patch_count(224, 15)
    with pytest.raises(ValueError, match="must divide both"):
        patchify(torch.zeros(10, 10, 3), 3)
    with pytest.raises(ValueError, match=r"\(H, W, C\)"):
        patchify(torch.zeros(10, 10), 5)
