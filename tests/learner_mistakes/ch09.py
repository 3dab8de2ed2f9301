"""Learner mistakes for chapter 09's exercises, written without reading the checkers."""

MISTAKES = [
    # ------------------------------------------------------------------ 09.1
    {
        "exercise": "09.1",
        "mistake": "takes the cost of attention to grow linearly with the number of tokens "
                   "(144 / 196) instead of with its square (every query meets every key)",
        "code": '''
tokens = (384 // 32) ** 2
answer = {"tokens": tokens, "values": 32 * 32 * 3, "cost_ratio": tokens / (224 // 16) ** 2}
''',
    },
    {
        "exercise": "09.1",
        "mistake": "counts the pixels of a patch but forgets its three colour channels "
                   "(1,024 values instead of 3,072)",
        "code": '''
tokens = (384 // 32) ** 2
answer = {
    "tokens": tokens,
    "values": 32 * 32,
    "cost_ratio": (tokens / (224 // 16) ** 2) ** 2,
}
''',
    },
    {
        "exercise": "09.1",
        "mistake": "gives the patches per side (12) as the number of tokens instead of the "
                   "12 x 12 = 144 patches of the grid",
        "code": '''
tokens = 384 // 32
answer = {"tokens": tokens, "values": 32 * 32 * 3, "cost_ratio": (tokens / (224 // 16)) ** 2}
''',
    },
    {
        "exercise": "09.1",
        "mistake": "inverts the cost ratio: old over new, (196 / 144)^2 = 1.85, as if the larger "
                   "patches made attention dearer",
        "code": '''
tokens = (384 // 32) ** 2
answer = {
    "tokens": tokens,
    "values": 32 * 32 * 3,
    "cost_ratio": ((224 // 16) ** 2 / tokens) ** 2,
}
''',
    },
    {
        "exercise": "09.1",
        "mistake": "adds the class token to the count (145 instead of the 144 patches asked for) "
                   "and to the ratio, (145 / 197)^2",
        "code": '''
tokens = (384 // 32) ** 2 + 1
answer = {
    "tokens": tokens,
    "values": 32 * 32 * 3,
    "cost_ratio": (tokens / ((224 // 16) ** 2 + 1)) ** 2,
}
''',
    },
    # ------------------------------------------------------------------ 09.2
    {
        "exercise": "09.2",
        "mistake": "takes the keys from the decoder's own positions as in self-attention: K has "
                   "T_tgt = 5 rows and the weights come out square (5 x 5)",
        "code": '''
d_k = d // h
answer = {
    "Q": (batch, h, T_tgt, d_k),
    "K": (batch, h, T_tgt, d_k),
    "weights": (batch, h, T_tgt, T_tgt),
    "outputs": (batch, T_tgt, d),
    "residual": "decoder",
}
''',
    },
    {
        "exercise": "09.2",
        "mistake": "transposes the attention weights: (batch, h, T_src, T_tgt) instead of one row "
                   "per target query, (batch, h, T_tgt, T_src)",
        "code": '''
d_k = d // h
answer = {
    "Q": (batch, h, T_tgt, d_k),
    "K": (batch, h, T_src, d_k),
    "weights": (batch, h, T_src, T_tgt),
    "outputs": (batch, T_tgt, d),
    "residual": "decoder",
}
''',
    },
    {
        "exercise": "09.2",
        "mistake": "says the residual connection adds the cross-attention output to the encoder's "
                   "stream; it is added to the decoder's",
        "code": '''
d_k = d // h
answer = {
    "Q": (batch, h, T_tgt, d_k),
    "K": (batch, h, T_src, d_k),
    "weights": (batch, h, T_tgt, T_src),
    "outputs": (batch, T_tgt, d),
    "residual": "encoder",
}
''',
    },
    {
        "exercise": "09.2",
        "mistake": "gives the block's output one row per source token (batch, T_src, d) instead of "
                   "one per target position (batch, T_tgt, d)",
        "code": '''
d_k = d // h
answer = {
    "Q": (batch, h, T_tgt, d_k),
    "K": (batch, h, T_src, d_k),
    "weights": (batch, h, T_tgt, T_src),
    "outputs": (batch, T_src, d),
    "residual": "decoder",
}
''',
    },
    # ------------------------------------------------------------------ 09.3
    {
        "exercise": "09.3",
        "mistake": "counts the decoder layer like an encoder layer: forgets its cross-attention "
                   "and its third LayerNorm",
        "code": '''
attention = 4 * d * d + 4 * d
mlp = 2 * d * d_ff + d_ff + d
layer_norm = 2 * d
encoder_layer = attention + mlp + 2 * layer_norm
answer = 12 * encoder_layer
''',
    },
    {
        "exercise": "09.3",
        "mistake": "counts a LayerNorm as d parameters (gamma only) although each has gamma and "
                   "beta",
        "code": '''
attention = 4 * d * d + 4 * d
mlp = 2 * d * d_ff + d_ff + d
layer_norm = d
encoder_layer = attention + mlp + 2 * layer_norm
decoder_layer = 2 * attention + mlp + 3 * layer_norm
answer = 6 * encoder_layer + 6 * decoder_layer
''',
    },
    {
        "exercise": "09.3",
        "mistake": "forgets the MLP's biases (d_ff + d per layer), counting only its two weight "
                   "matrices",
        "code": '''
attention = 4 * d * d + 4 * d
mlp = 2 * d * d_ff
layer_norm = 2 * d
encoder_layer = attention + mlp + 2 * layer_norm
decoder_layer = 2 * attention + mlp + 3 * layer_norm
answer = 6 * encoder_layer + 6 * decoder_layer
''',
    },
    {
        "exercise": "09.3",
        "mistake": "gives one encoder layer plus one decoder layer instead of the total of all "
                   "12 layers (forgets the factor 6)",
        "code": '''
attention = 4 * d * d + 4 * d
mlp = 2 * d * d_ff + d_ff + d
layer_norm = 2 * d
encoder_layer = attention + mlp + 2 * layer_norm
decoder_layer = 2 * attention + mlp + 3 * layer_norm
answer = encoder_layer + decoder_layer
''',
    },
    {
        "exercise": "09.3",
        "mistake": "counts all 12 layers as decoder layers (12 DecoderBlocks), although the 6 "
                   "encoder layers have no cross-attention",
        "code": '''
with torch.device("meta"):
    answer = 12 * count(DecoderBlock(d, h, d_ff, **post))
''',
    },
    # ------------------------------------------------------------------ 09.4
    {
        "exercise": "09.4",
        "mistake": "applies a causal (lower-triangular) mask in cross-attention, as in the "
                   "decoder's self-attention: target positions lose source tokens they may read",
        "code": '''
def cross_attention(x, memory, W_Q, W_K, W_V, W_O, n_heads):
    B, T_tgt, d = x.shape
    T_src = memory.shape[1]
    d_k = d // n_heads
    q = (x @ W_Q).view(B, T_tgt, n_heads, d_k).transpose(1, 2)
    k = (memory @ W_K).view(B, T_src, n_heads, d_k).transpose(1, 2)
    v = (memory @ W_V).view(B, T_src, n_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    causal = torch.ones(T_tgt, T_src, dtype=torch.bool).tril()
    scores = scores.masked_fill(~causal, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    heads = weights @ v
    return heads.transpose(1, 2).reshape(B, T_tgt, d) @ W_O


answer = cross_attention
''',
    },
    {
        "exercise": "09.4",
        "mistake": "ignores n_heads: does single-head attention over the full width (scaled by "
                   "sqrt(d)) instead of splitting into heads of width d / h",
        "code": '''
def cross_attention(x, memory, W_Q, W_K, W_V, W_O, n_heads):
    d = x.shape[-1]
    q = x @ W_Q
    k = memory @ W_K
    v = memory @ W_V
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1)
    return (weights @ v) @ W_O


answer = cross_attention
''',
    },
    {
        "exercise": "09.4",
        "mistake": "splits the heads with a single view to (B, h, T, d_k) without the transpose, "
                   "so each head's rows mix features of different positions",
        "code": '''
def cross_attention(x, memory, W_Q, W_K, W_V, W_O, n_heads):
    B, T_tgt, d = x.shape
    T_src = memory.shape[1]
    d_k = d // n_heads
    q = (x @ W_Q).view(B, n_heads, T_tgt, d_k)
    k = (memory @ W_K).view(B, n_heads, T_src, d_k)
    v = (memory @ W_V).view(B, n_heads, T_src, d_k)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), dim=-1)
    heads = weights @ v
    return heads.reshape(B, T_tgt, d) @ W_O


answer = cross_attention
''',
    },
    {
        "exercise": "09.4",
        "mistake": "takes the softmax over the target (query) axis, dim=-2, instead of over the "
                   "source keys",
        "code": '''
def cross_attention(x, memory, W_Q, W_K, W_V, W_O, n_heads):
    B, T_tgt, d = x.shape
    T_src = memory.shape[1]
    d_k = d // n_heads
    q = (x @ W_Q).view(B, T_tgt, n_heads, d_k).transpose(1, 2)
    k = (memory @ W_K).view(B, T_src, n_heads, d_k).transpose(1, 2)
    v = (memory @ W_V).view(B, T_src, n_heads, d_k).transpose(1, 2)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), dim=-2)
    heads = weights @ v
    return heads.transpose(1, 2).reshape(B, T_tgt, d) @ W_O


answer = cross_attention
''',
    },
    {
        "exercise": "09.4",
        "mistake": "merges the heads but forgets the output projection W_O",
        "code": '''
def cross_attention(x, memory, W_Q, W_K, W_V, W_O, n_heads):
    B, T_tgt, d = x.shape
    T_src = memory.shape[1]
    d_k = d // n_heads
    q = (x @ W_Q).view(B, T_tgt, n_heads, d_k).transpose(1, 2)
    k = (memory @ W_K).view(B, T_src, n_heads, d_k).transpose(1, 2)
    v = (memory @ W_V).view(B, T_src, n_heads, d_k).transpose(1, 2)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), dim=-1)
    heads = weights @ v
    return heads.transpose(1, 2).reshape(B, T_tgt, d)


answer = cross_attention
''',
    },
    # ------------------------------------------------------------------ 09.5
    {
        "exercise": "09.5",
        "mistake": "zeroes the loss at the -100 positions but divides by all B * T positions "
                   "instead of by the number of chosen ones",
        "code": '''
def mlm_loss(logits, targets):
    chosen = targets != -100
    log_probs = torch.log_softmax(logits, dim=-1)
    safe = targets.clamp(min=0)
    picked = log_probs.gather(-1, safe[..., None]).squeeze(-1)
    return -(picked * chosen).sum() / targets.numel()


answer = mlm_loss
''',
    },
    {
        "exercise": "09.5",
        "mistake": "returns the sum of the chosen positions' cross-entropies instead of their mean",
        "code": '''
def mlm_loss(logits, targets):
    chosen = targets != -100
    log_probs = torch.log_softmax(logits[chosen], dim=-1)
    picked = log_probs.gather(-1, targets[chosen][:, None]).squeeze(-1)
    return -picked.sum()


answer = mlm_loss
''',
    },
    {
        "exercise": "09.5",
        "mistake": "takes log_softmax over the positions axis (dim=1) instead of over the "
                   "vocabulary",
        "code": '''
def mlm_loss(logits, targets):
    chosen = targets != -100
    log_probs = torch.log_softmax(logits, dim=1)
    picked = log_probs[chosen].gather(-1, targets[chosen][:, None]).squeeze(-1)
    return -picked.mean()


answer = mlm_loss
''',
    },
    {
        "exercise": "09.5",
        "mistake": "averages within each sequence, then over the batch: sequences with few "
                   "corrupted positions weigh as much as those with many, so it is not the mean "
                   "over all chosen positions",
        "code": '''
def mlm_loss(logits, targets):
    chosen = targets != -100
    log_probs = torch.log_softmax(logits, dim=-1)
    safe = targets.clamp(min=0)
    picked = log_probs.gather(-1, safe[..., None]).squeeze(-1)
    per_sequence = -(picked * chosen).sum(dim=1) / chosen.sum(dim=1).clamp(min=1)
    return per_sequence.mean()


answer = mlm_loss
''',
    },
    {
        "exercise": "09.5",
        "mistake": "gives the loss in bits (divides by log 2) instead of in nats as cross-entropy "
                   "is computed from the natural log_softmax",
        "code": '''
def mlm_loss(logits, targets):
    chosen = targets != -100
    log_probs = torch.log_softmax(logits[chosen], dim=-1)
    picked = log_probs.gather(-1, targets[chosen][:, None]).squeeze(-1)
    return -picked.mean() / math.log(2)


answer = mlm_loss
''',
    },
]
