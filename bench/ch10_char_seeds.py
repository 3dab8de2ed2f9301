"""Chapter 10: the character model's claims over ten seeds, under every CPU kernel.

Seed ``s`` repeats the chapter's training cell with ``torch.manual_seed(s)`` before the model is
built and the batch generator seeded ``1 + s`` (seed 0 is the chapter's run): ``GPT`` of width 64,
2 layers of 4 heads, context 64, 400 AdamW steps at lr 5e-3 with 20 warm-up steps, batches of 16
windows of ``tformer/data/tiny_tales.txt``. Then it checks what the page says: the first loss
against ln n_vocab, the validation loss, the loss curve's levels the figure's alt text states, and
the samples after the prompt "Every day Ella fed the " (the chapter's generator seed 0): at a low
temperature (greedy, τ = 0.25, 0.5) at least 80 % of the words are words of the corpus, at τ = 3 most
are not.

    PYTHONPATH=src python bench/ch10_char_seeds.py     # all four kernels, writes the JSON

Like the chapter, each measurement runs on one thread. Writes
``src/tformer/data/bench/ch10_char.json``.
"""

from __future__ import annotations

import math
import re

import kernels
import torch

from tformer.data.text import CharTokenizer, load_text, make_batch
from tformer.generation import generate
from tformer.model import GPT, GPTConfig
from tformer.training import next_token_loss, train

PROMPT = "Every day Ella fed the "


def words(sample: str) -> list[str]:
    """The complete words of a sample (a last word cut off by the length limit is dropped)."""
    found = re.findall(r"[A-Za-z]+", sample)
    if found and sample[-1:].isalpha():
        found = found[:-1]
    return found


def measure(seed: int) -> dict:
    torch.set_num_threads(1)
    text = load_text()
    tokenizer = CharTokenizer.from_text(text)
    data = tokenizer.encode(text)
    split = int(0.9 * len(data))
    train_data, valid_data = data[:split], data[split:]
    vocabulary = set(re.findall(r"[A-Za-z]+", text))

    torch.manual_seed(seed)
    config = GPTConfig.tiny(tokenizer.n_vocab, d=64, n_layers=2, n_heads=4, n_ctx=64)
    model = GPT(config)
    batches = torch.Generator().manual_seed(1 + seed)
    log = train(model, lambda: make_batch(train_data, 16, config.n_ctx, generator=batches),
                n_steps=400, lr=5e-3, warmup=20)
    with torch.no_grad():
        x, y = make_batch(valid_data, 64, config.n_ctx, generator=torch.Generator().manual_seed(2))
        valid = next_token_loss(model(x), y).item()
    smooth = torch.tensor(log.losses).unfold(0, 20, 1).mean(-1)
    uniform = math.log(tokenizer.n_vocab)
    prompt = tokenizer.encode(PROMPT)[None]

    def sample(temperature: float) -> str:
        out = generate(model, prompt, 40, temperature=temperature,
                       generator=torch.Generator().manual_seed(0))
        return tokenizer.decode(out[0, prompt.shape[1]:])

    low = [w for t in (0.0, 0.25, 0.5) for w in words(sample(t))]  # greedy, τ = 0.25, 0.5
    low_share = sum(w in vocabulary for w in low) / max(len(low), 1)
    hot = words(sample(3.0))
    hot_share = sum(w not in vocabulary for w in hot) / max(len(hot), 1)
    claims = {
        "first_loss_near_uniform": abs(log.losses[0] - uniform) < 0.3,
        "valid_below_1": valid < 1.0,
        "curve_1p8_at_100": abs(smooth[100 - 19].item() - 1.8) < 0.2,
        "curve_1_at_200": abs(smooth[200 - 19].item() - 1.0) < 0.2,
        "low_temperature_80pc_words": low_share >= 0.8,
        "temperature_3_mostly_non_words": hot_share > 0.5,
    }
    values = {
        "first_loss": log.losses[0], "valid_loss": valid, "final_loss": log.final_loss,
        "smooth_100": smooth[100 - 19].item(), "smooth_200": smooth[200 - 19].item(),
        "low_temperature_word_share": low_share, "temperature_3_non_word_share": hot_share,
    }
    return {"claims": claims, "values": values}


if __name__ == "__main__":
    kernels.main("ch10_char", measure, depends=[
        "src/tformer/model.py", "src/tformer/training.py", "src/tformer/generation.py",
        "src/tformer/data/text.py", "src/tformer/data/tiny_tales.txt", "src/tformer/layers.py",
        "src/tformer/multihead.py",
    ])
