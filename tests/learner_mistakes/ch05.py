"""Learner mistakes for chapter 05's exercises, written without reading the checkers."""

MISTAKES = [
    # ---------------------------------------------------------------- 05.1
    {
        "exercise": "05.1",
        "mistake": "applies the causal mask to the unscaled scores, as the chapter did, and "
                   "forgets to divide by √d_k = √2 first",
        "code": '''
mask = torch.ones(3, 3, dtype=torch.bool).tril()
answer = torch.softmax(scores_000.masked_fill(~mask, float("-inf")), dim=-1)
''',
    },
    {
        "exercise": "05.1",
        "mistake": "masks after the softmax: takes the softmax of all scaled scores and then "
                   "zeroes the future weights, so rows 1 and 2 no longer sum to 1",
        "code": '''
weights = torch.softmax(scores_000 / math.sqrt(2), dim=-1)
mask = torch.ones(3, 3, dtype=torch.bool).tril()
answer = weights * mask
''',
    },
    {
        "exercise": "05.1",
        "mistake": "fills the masked scores with 0 instead of -inf, so hidden keys still get "
                   "weight e^0 / Σ in the softmax",
        "code": '''
scaled = scores_000 / math.sqrt(2)
mask = torch.ones(3, 3, dtype=torch.bool).tril()
answer = torch.softmax(scaled.masked_fill(~mask, 0.0), dim=-1)
''',
    },
    {
        "exercise": "05.1",
        "mistake": "takes the softmax over the wrong axis (dim=0, over queries), so the columns "
                   "sum to 1 instead of the rows",
        "code": '''
scaled = scores_000 / math.sqrt(2)
mask = torch.ones(3, 3, dtype=torch.bool).tril()
answer = torch.softmax(scaled.masked_fill(~mask, float("-inf")), dim=0)
''',
    },
    {
        "exercise": "05.1",
        "mistake": "builds the mask with triu instead of tril: each query sees itself and the "
                   "future keys, and the past is hidden",
        "code": '''
scaled = scores_000 / math.sqrt(2)
mask = torch.ones(3, 3, dtype=torch.bool).triu()
answer = torch.softmax(scaled.masked_fill(~mask, float("-inf")), dim=-1)
''',
    },
    # ---------------------------------------------------------------- 05.2
    {
        "exercise": "05.2",
        "mistake": "zeroes the past keys (j < i) instead of the future ones (j > i): uses "
                   "tril(diagonal=-1) for 'future'",
        "code": '''
weights = torch.softmax(scores_4, dim=-1)
future = torch.ones(4, 4, dtype=torch.bool).tril(diagonal=-1)
answer = weights.masked_fill(future, 0.0).sum(dim=-1)
''',
    },
    {
        "exercise": "05.2",
        "mistake": "off-by-one on the diagonal: triu() without diagonal=1 also zeroes each "
                   "query's own key (j = i), so even the last row loses weight",
        "code": '''
weights = torch.softmax(scores_4, dim=-1)
future = torch.ones(4, 4, dtype=torch.bool).triu()
answer = weights.masked_fill(future, 0.0).sum(dim=-1)
''',
    },
    {
        "exercise": "05.2",
        "mistake": "sums the columns (dim=0) instead of the rows: gives the total weight each "
                   "key receives, not each query's row sum",
        "code": '''
weights = torch.softmax(scores_4, dim=-1)
future = torch.ones(4, 4, dtype=torch.bool).triu(diagonal=1)
answer = weights.masked_fill(future, 0.0).sum(dim=0)
''',
    },
    {
        "exercise": "05.2",
        "mistake": "applies the repair (renormalises each row) before summing, so reports four "
                   "ones instead of the row sums of the late-masked matrix",
        "code": '''
weights = torch.softmax(scores_4, dim=-1)
future = torch.ones(4, 4, dtype=torch.bool).triu(diagonal=1)
late = weights.masked_fill(future, 0.0)
late = late / late.sum(dim=-1, keepdim=True)
answer = late.sum(dim=-1)
''',
    },
    {
        "exercise": "05.2",
        "mistake": "gives the whole 4 × 4 late-masked weight matrix instead of its four row sums",
        "code": '''
weights = torch.softmax(scores_4, dim=-1)
future = torch.ones(4, 4, dtype=torch.bool).triu(diagonal=1)
answer = weights.masked_fill(future, 0.0)
''',
    },
    # ---------------------------------------------------------------- 05.3
    {
        "exercise": "05.3",
        "mistake": "aligns the causal mask to the upper-left corner (what is_causal=True does): "
                   "query i sees only keys 0..i, so it counts 127 + 126 + 125 + 124 = 502 hidden "
                   "entries instead of 3 + 2 + 1 + 0 = 6",
        "code": '''
B, h, T_q, T_k = 8, 8, 4, 128
answer = {
    "padding": (B, 1, 1, T_k),
    "combined": (B, 1, T_q, T_k),
    "scores": (B, h, T_q, T_k),
    "hidden": sum(T_k - (i + 1) for i in range(T_q)),
}
''',
    },
    {
        "exercise": "05.3",
        "mistake": "gives the padding mask as (B, T_k) without the singleton head and query "
                   "axes; (8, 128) does not broadcast against scores (8, 8, 4, 128)",
        "code": '''
B, h, T_q, T_k = 8, 8, 4, 128
answer = {
    "padding": (B, T_k),
    "combined": (B, 1, T_q, T_k),
    "scores": (B, h, T_q, T_k),
    "hidden": T_q * (T_q - 1) // 2,
}
''',
    },
    {
        "exercise": "05.3",
        "mistake": "ignores the KV cache and treats the step as full self-attention over all 128 "
                   "positions: T_q = 128 queries, square masks and 128·127/2 hidden entries",
        "code": '''
B, h, T = 8, 8, 128
answer = {
    "padding": (B, 1, 1, T),
    "combined": (B, 1, T, T),
    "scores": (B, h, T, T),
    "hidden": T * (T - 1) // 2,
}
''',
    },
    {
        "exercise": "05.3",
        "mistake": "counts the diagonal as hidden (T_q(T_q + 1)/2 = 10): a query may attend to "
                   "its own key, so only 3 + 2 + 1 + 0 = 6 are hidden",
        "code": '''
B, h, T_q, T_k = 8, 8, 4, 128
answer = {
    "padding": (B, 1, 1, T_k),
    "combined": (B, 1, T_q, T_k),
    "scores": (B, h, T_q, T_k),
    "hidden": T_q * (T_q + 1) // 2,
}
''',
    },
    {
        "exercise": "05.3",
        "mistake": "puts keys before queries in the shapes (scores as (B, h, T_k, T_q)), so the "
                   "padding mask runs along the query axis: the score matrix is queries × keys",
        "code": '''
B, h, T_q, T_k = 8, 8, 4, 128
answer = {
    "padding": (B, 1, T_k, 1),
    "combined": (B, 1, T_k, T_q),
    "scores": (B, h, T_k, T_q),
    "hidden": T_q * (T_q - 1) // 2,
}
''',
    },
    {
        "exercise": "05.3",
        "mistake": "gives the padding mask as (B, 1, T_k), one singleton axis short: it "
                   "broadcasts only because B = h = 8, and then lines the batch axis up with "
                   "the heads axis, so sequence b's padding would be applied to head b",
        "code": '''
B, h, T_q, T_k = 8, 8, 4, 128
answer = {
    "padding": (B, 1, T_k),
    "combined": (B, T_q, T_k),
    "scores": (B, h, T_q, T_k),
    "hidden": T_q * (T_q - 1) // 2,
}
''',
    },
    # ---------------------------------------------------------------- 05.4
    {
        "exercise": "05.4",
        "mistake": "pads on the right instead of the left (real = arange < length): every "
                   "query then sees key 0, so no row is dead",
        "code": '''
lengths, T = torch.tensor([4, 2, 1]), 4
real = torch.arange(T) < lengths[:, None]
causal = torch.ones(T, T, dtype=torch.bool).tril()
mask = real[:, None, :] & causal
answer = ~mask.any(dim=-1)
''',
    },
    {
        "exercise": "05.4",
        "mistake": "uses ~mask.all(dim=-1): marks rows with *some* hidden key instead of rows "
                   "with *no* visible key",
        "code": '''
lengths, T = torch.tensor([4, 2, 1]), 4
real = torch.arange(T) >= T - lengths[:, None]
causal = torch.ones(T, T, dtype=torch.bool).tril()
mask = real[:, None, :] & causal
answer = ~mask.all(dim=-1)
''',
    },
    {
        "exercise": "05.4",
        "mistake": "off-by-one in the left padding: uses > instead of >= (arange > T - length), "
                   "so each sequence loses its first real token",
        "code": '''
lengths, T = torch.tensor([4, 2, 1]), 4
real = torch.arange(T) > T - lengths[:, None]
causal = torch.ones(T, T, dtype=torch.bool).tril()
mask = real[:, None, :] & causal
answer = ~mask.any(dim=-1)
''',
    },
    {
        "exercise": "05.4",
        "mistake": "forgets the negation: marks the live rows (some visible key) True instead "
                   "of the dead ones",
        "code": '''
lengths, T = torch.tensor([4, 2, 1]), 4
real = torch.arange(T) >= T - lengths[:, None]
causal = torch.ones(T, T, dtype=torch.bool).tril()
mask = real[:, None, :] & causal
answer = mask.any(dim=-1)
''',
    },
    # ---------------------------------------------------------------- 05.5
    {
        "exercise": "05.5",
        "mistake": "does not ignore the padded positions: averages the cross-entropy over all "
                   "18 positions, including the arbitrary targets at the pads",
        "code": '''
n_vocab = logits.shape[-1]
answer = F.cross_entropy(logits.reshape(-1, n_vocab), targets.reshape(-1)).item()
''',
    },
    {
        "exercise": "05.5",
        "mistake": "off-by-one in the real-token mask (arange <= length), so the first pad of "
                   "each shorter sequence is counted as a real token",
        "code": '''
real = torch.arange(targets.shape[1]) <= lengths[:, None]
n_vocab = logits.shape[-1]
answer = F.cross_entropy(logits.reshape(-1, n_vocab),
                         targets.masked_fill(~real, -100).reshape(-1),
                         ignore_index=-100).item()
''',
    },
    {
        "exercise": "05.5",
        "mistake": "averages per sequence and then over the batch (mean of 3 per-sequence "
                   "means) instead of a mean over all real tokens: the short sequence gets too "
                   "much weight",
        "code": '''
real = torch.arange(targets.shape[1]) < lengths[:, None]
per_sequence = []
for b in range(logits.shape[0]):
    per_sequence.append(F.cross_entropy(logits[b], targets[b].masked_fill(~real[b], -100),
                                        ignore_index=-100))
answer = torch.stack(per_sequence).mean().item()
''',
    },
    {
        "exercise": "05.5",
        "mistake": "treats the sequences as left-padded (real = arange >= T - length), so it "
                   "keeps the pads at the end and ignores real tokens at the start",
        "code": '''
T = targets.shape[1]
real = torch.arange(T) >= T - lengths[:, None]
n_vocab = logits.shape[-1]
answer = F.cross_entropy(logits.reshape(-1, n_vocab),
                         targets.masked_fill(~real, -100).reshape(-1),
                         ignore_index=-100).item()
''',
    },
    {
        "exercise": "05.5",
        "mistake": "right value, wrong type: leaves the loss as a 0-d tensor (no .item()) where "
                   "a Python float is asked for",
        "code": '''
real = torch.arange(targets.shape[1]) < lengths[:, None]
n_vocab = logits.shape[-1]
answer = F.cross_entropy(logits.reshape(-1, n_vocab),
                         targets.masked_fill(~real, -100).reshape(-1),
                         ignore_index=-100)
''',
    },
    # ---------------------------------------------------------------- 05.6
    {
        "exercise": "05.6",
        "mistake": "forgets to scale the scores by 1/√d_k",
        "code": '''
def masked_attention(queries, keys, values, mask=None):
    scores = queries @ keys.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    row_max = scores.amax(dim=-1, keepdim=True)
    if torch.isneginf(row_max).any():
        raise ValueError("a query has no visible key")
    exponentials = torch.exp(scores - row_max)
    weights = exponentials / exponentials.sum(dim=-1, keepdim=True)
    return weights @ values, weights
''',
    },
    {
        "exercise": "05.6",
        "mistake": "does not subtract the row maximum before exp: exact on small scores, but "
                   "scores of 10^4 overflow to inf and the weights become nan",
        "code": '''
def masked_attention(queries, keys, values, mask=None):
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
    if mask is not None:
        if not mask.any(dim=-1).all():
            raise ValueError("a query has no visible key")
        scores = scores.masked_fill(~mask, float("-inf"))
    exponentials = torch.exp(scores)
    weights = exponentials / exponentials.sum(dim=-1, keepdim=True)
    return weights @ values, weights
''',
    },
    {
        "exercise": "05.6",
        "mistake": "ignores the mask argument: computes plain scaled attention over every key",
        "code": '''
def masked_attention(queries, keys, values, mask=None):
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
    row_max = scores.amax(dim=-1, keepdim=True)
    exponentials = torch.exp(scores - row_max)
    weights = exponentials / exponentials.sum(dim=-1, keepdim=True)
    return weights @ values, weights
''',
    },
    {
        "exercise": "05.6",
        "mistake": "masks after the softmax: normalises over all keys, then sets the masked "
                   "weights to 0 without renormalising, so masked rows sum to less than 1",
        "code": '''
def masked_attention(queries, keys, values, mask=None):
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
    exponentials = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    weights = exponentials / exponentials.sum(dim=-1, keepdim=True)
    if mask is not None:
        if not mask.any(dim=-1).all():
            raise ValueError("a query has no visible key")
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ values, weights
''',
    },
    {
        "exercise": "05.6",
        "mistake": "fills masked scores with -1e9 instead of -inf and never checks for a query "
                   "with no visible key: a fully masked row silently gets uniform weights "
                   "instead of raising ValueError",
        "code": '''
def masked_attention(queries, keys, values, mask=None):
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    exponentials = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    weights = exponentials / exponentials.sum(dim=-1, keepdim=True)
    return weights @ values, weights
''',
    },
    {
        "exercise": "05.6",
        "mistake": "subtracts the row maximum taken before masking (over all keys, visible or "
                   "not): when a masked key has a huge score, every visible exponential "
                   "underflows to 0 and the row is 0/0 = nan",
        "code": '''
def masked_attention(queries, keys, values, mask=None):
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
    row_max = scores.amax(dim=-1, keepdim=True)
    if mask is not None:
        if not mask.any(dim=-1).all():
            raise ValueError("a query has no visible key")
        scores = scores.masked_fill(~mask, float("-inf"))
    exponentials = torch.exp(scores - row_max)
    weights = exponentials / exponentials.sum(dim=-1, keepdim=True)
    return weights @ values, weights
''',
    },
    # ---------------------------------------------------------------- 05.7
    {
        "exercise": "05.7",
        "mistake": "ignores the padding: returns 0 … T-1 for every sequence, the same ids a "
                   "right-padded or unpadded batch would get",
        "code": '''
def position_ids(real):
    B, T = real.shape
    return torch.arange(T).expand(B, T).clone()
''',
    },
    {
        "exercise": "05.7",
        "mistake": "off-by-one: uses the running count of real tokens without subtracting 1, "
                   "so real tokens are numbered 1, 2, 3, … instead of 0, 1, 2, …",
        "code": '''
def position_ids(real):
    return real.long().cumsum(dim=-1)
''',
    },
    {
        "exercise": "05.7",
        "mistake": "subtracts the number of pads from the slot index but does not set the "
                   "padded slots to 0: pads get negative ids",
        "code": '''
def position_ids(real):
    T = real.shape[-1]
    n_pads = (~real).sum(dim=-1, keepdim=True)
    return torch.arange(T) - n_pads
''',
    },
    {
        "exercise": "05.7",
        "mistake": "zeroes the pads but keeps each real token's slot index, i.e. does not "
                   "shift the numbering to start at the first real token",
        "code": '''
def position_ids(real):
    T = real.shape[-1]
    return torch.where(real, torch.arange(T), 0)
''',
    },
    {
        "exercise": "05.7",
        "mistake": "right values, wrong type: returns a float tensor (cumsum of real.float()) "
                   "where an integer tensor is asked for; it cannot index a position table",
        "code": '''
def position_ids(real):
    return (real.float().cumsum(dim=-1) - 1).clamp(min=0)
''',
    },
]
