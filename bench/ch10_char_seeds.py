"""Chapter 10: the character model's claims over ten seeds, under every CPU kernel.

Seed ``s`` repeats the chapter's training cell with ``torch.manual_seed(s)`` before the model is
built and the batch generator seeded ``1 + s`` (seed 0 is the chapter's run): ``GPT`` of width 64,
2 layers of 4 heads, context 64, 600 AdamW steps at lr 5e-3 with 20 warm-up steps, batches of 16
windows of the first 90 % of the Python Language Reference's help topics
(``tformer.data.load_python_docs``). Before steps 0, 100 and 300 and after the last, the chapter
writes 8 samples of 56 characters after the prompt "The " at τ = 0.5 (generator seed 0); the
share of their words (runs of at least two letters) that are words of the corpus is measured at
each point. Then it checks what the page says: the first loss against ln n_vocab; the validation
loss and the end of the loss curve against the bigram baseline (an add-0.1 bigram model of the
training text, scored on the held-out 10 %); the word share rising; the samples after the prompt
"The value of " (generator seed 0) at a low temperature (greedy, τ = 0.25, 0.5) mostly corpus
words, at τ = 3 mostly not.

    PYTHONPATH=src python bench/ch10_char_seeds.py     # all four kernels, writes the JSON

Like the chapter, each measurement runs on one thread. Writes
``src/tformer/data/bench/ch10_char.json``.
"""

from __future__ import annotations

import math

import kernels
import torch

from tformer.data.text import (
    WORD,
    CharTokenizer,
    load_python_docs,
    make_batch,
    ngram_loss,
    word_share,
)
from tformer.generation import generate
from tformer.model import GPT, GPTConfig
from tformer.training import next_token_loss, train

N_STEPS = 600
LR = 5e-3
CHECKPOINTS = (0, 100, 300, N_STEPS)
PROMPT = "The value of "


def measure(seed: int) -> dict:
    torch.set_num_threads(1)
    text = load_python_docs()
    tokenizer = CharTokenizer.from_text(text)
    data = tokenizer.encode(text)
    split = int(0.9 * len(data))
    train_data, valid_data = data[:split], data[split:]
    vocabulary = set(WORD.findall(text))
    unigram = ngram_loss(train_data, valid_data, tokenizer.n_vocab, 1)
    bigram = ngram_loss(train_data, valid_data, tokenizer.n_vocab, 2)

    torch.manual_seed(seed)
    config = GPTConfig.tiny(tokenizer.n_vocab, d=64, n_layers=2, n_heads=4, n_ctx=64)
    model = GPT(config)
    starts = tokenizer.encode("The ").repeat(8, 1)

    def write() -> list[str]:
        out = generate(model, starts, 56, temperature=0.5,
                       generator=torch.Generator().manual_seed(0))
        return [tokenizer.decode(row[4:]) for row in out]

    shares: dict[int, float] = {}
    step = 0
    batches = torch.Generator().manual_seed(1 + seed)

    def next_batch():
        nonlocal step
        if step in CHECKPOINTS:
            hits, total = word_share(write(), vocabulary)
            shares[step] = hits / max(total, 1)
        step += 1
        return make_batch(train_data, 16, config.n_ctx, generator=batches)

    log = train(model, next_batch, n_steps=N_STEPS, lr=LR, warmup=20)
    hits, total = word_share(write(), vocabulary)
    shares[N_STEPS] = hits / max(total, 1)
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

    low_hits, low_total = word_share([sample(t) for t in (0.0, 0.25, 0.5)], vocabulary)
    hot_hits, hot_total = word_share([sample(3.0)], vocabulary)
    low_share = low_hits / max(low_total, 1)
    hot_share = (hot_total - hot_hits) / max(hot_total, 1)
    claims = {
        "first_loss_near_uniform": abs(log.losses[0] - uniform) < 0.3,
        "valid_below_bigram": valid < bigram,
        "curve_end_below_bigram": smooth[-1].item() < bigram,
        "curve_below_unigram_by_100": smooth[100 - 19].item() < unigram,
        "word_share_rises": shares[N_STEPS] > shares[0] + 0.3,
        "word_share_final_over_half": shares[N_STEPS] > 0.5,
        "low_temperature_most_words": low_share > 0.5,
        "temperature_3_mostly_non_words": hot_share > 0.5,
    }
    values = {
        "first_loss": log.losses[0], "valid_loss": valid, "final_loss": log.final_loss,
        "unigram_loss": unigram, "bigram_loss": bigram, "smooth_100": smooth[100 - 19].item(),
        "smooth_end": smooth[-1].item(),
        **{f"word_share_{s}": shares[s] for s in CHECKPOINTS},
        "low_temperature_word_share": low_share, "temperature_3_non_word_share": hot_share,
    }
    return {"claims": claims, "values": values}


if __name__ == "__main__":
    kernels.main("ch10_char", measure, depends=[
        "src/tformer/model.py", "src/tformer/training.py", "src/tformer/generation.py",
        "src/tformer/data/text.py", "src/tformer/data/python_docs.txt", "src/tformer/layers.py",
        "src/tformer/multihead.py",
    ])
