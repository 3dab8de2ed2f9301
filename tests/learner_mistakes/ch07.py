"""Learner mistakes for chapter 07's exercises, written without reading the checkers."""

MISTAKES = [
    # ------------------------------------------------------------------ 07.1
    {
        "exercise": "07.1",
        "mistake": "splits the heads with view but forgets the transpose: Q, K, V are given as "
                   "(B, T, h, d_k) instead of (B, h, T, d_k), so Q @ K^T comes out as "
                   "(B, T, h, h) instead of one T x T table per head",
        "code": '''
d_k = d // h
answer = {
    "d_k": d_k,
    "Q": (B, T, h, d_k),
    "K": (B, T, h, d_k),
    "V": (B, T, h, d_k),
    "scores": (B, T, h, h),
    "concat": (B, T, d),
}
''',
    },
    {
        "exercise": "07.1",
        "mistake": "gives every head the full model width (d_k = d = 768) instead of d / h = 64, "
                   "so the concatenated heads come out h times too wide",
        "code": '''
d_k = d
answer = {
    "d_k": d_k,
    "Q": (B, h, T, d_k),
    "K": (B, h, T, d_k),
    "V": (B, h, T, d_k),
    "scores": (B, h, T, T),
    "concat": (B, T, h * d_k),
}
''',
    },
    {
        "exercise": "07.1",
        "mistake": "leaves the head axis out of the attention scores: (B, T, T) instead of "
                   "(B, h, T, T), as if all heads shared one table",
        "code": '''
d_k = d // h
answer = {
    "d_k": d_k,
    "Q": (B, h, T, d_k),
    "K": (B, h, T, d_k),
    "V": (B, h, T, d_k),
    "scores": (B, T, T),
    "concat": (B, T, d),
}
''',
    },
    {
        "exercise": "07.1",
        "mistake": "computes d_k with true division (d / h = 64.0), so d_k and every shape holding "
                   "it contain a float where an integer is asked for",
        "code": '''
d_k = d / h
answer = {
    "d_k": d_k,
    "Q": (B, h, T, d_k),
    "K": (B, h, T, d_k),
    "V": (B, h, T, d_k),
    "scores": (B, h, T, T),
    "concat": (B, T, d),
}
''',
    },
    {
        "exercise": "07.1",
        "mistake": "gives the heads' outputs before they are merged, (B, h, T, d_k), as the "
                   "shape of the concatenation instead of (B, T, d)",
        "code": '''
d_k = d // h
answer = {
    "d_k": d_k,
    "Q": (B, h, T, d_k),
    "K": (B, h, T, d_k),
    "V": (B, h, T, d_k),
    "scores": (B, h, T, T),
    "concat": (B, h, T, d_k),
}
''',
    },
    # ------------------------------------------------------------------ 07.2
    {
        "exercise": "07.2",
        "mistake": "forgets the heads: counts one T x T table per sequence (B * T * T * 4 bytes) "
                   "instead of one per sequence and head, 12 times too small",
        "code": '''
answer = 4 * B * T * T
''',
    },
    {
        "exercise": "07.2",
        "mistake": "gives the number of scores (B * h * T * T), not their size in bytes: forgets "
                   "the 4 bytes of a float32",
        "code": '''
answer = B * h * T * T
''',
    },
    {
        "exercise": "07.2",
        "mistake": "multiplies by 32 for a float32 — that is bits, not bytes (8 times too big)",
        "code": '''
answer = B * h * T * T * 32
''',
    },
    {
        "exercise": "07.2",
        "mistake": "gives the memory in MiB (384) although the answer is asked in bytes",
        "code": '''
answer = B * h * T * T * 4 // 2**20
''',
    },
    {
        "exercise": "07.2",
        "mistake": "right number of bytes but as a float (bits divided by 8 with /), where an "
                   "integer is asked for",
        "code": '''
answer = B * h * T * T * 32 / 8
''',
    },
    # ------------------------------------------------------------------ 07.3
    {
        "exercise": "07.3",
        "mistake": "counts the four weight matrices but leaves out their biases (4d^2 instead of "
                   "4d^2 + 4d)",
        "code": '''
d_model = 512
answer = 4 * d_model * d_model
''',
    },
    {
        "exercise": "07.3",
        "mistake": "thinks every head has its own full d x d query, key and value matrices, so "
                   "multiplies the input projections by h (they are d x d_k per head, d x d in all)",
        "code": '''
d_model, n_heads = 512, 8
answer = n_heads * 3 * (d_model * d_model + d_model) + (d_model * d_model + d_model)
''',
    },
    {
        "exercise": "07.3",
        "mistake": "counts only the three input projections and forgets the output projection W_O "
                   "and its bias",
        "code": '''
d_model = 512
answer = 3 * (d_model * d_model + d_model)
''',
    },
    {
        "exercise": "07.3",
        "mistake": "takes each projection's bias to be one head wide (64) instead of d = 512 wide",
        "code": '''
d_model, d_head = 512, 64
answer = 4 * (d_model * d_model + d_head)
''',
    },
    # ------------------------------------------------------------------ 07.4
    {
        "exercise": "07.4",
        "mistake": "gives FLOPs (the FlopCounterMode total, two per multiply-add) instead of "
                   "multiply-adds: twice the answer",
        "code": '''
T_seq, d_seq = 1024, 768
answer = 2 * (4 * T_seq * d_seq * d_seq + 2 * T_seq * T_seq * d_seq)
''',
    },
    {
        "exercise": "07.4",
        "mistake": "counts the scores Q K^T but leaves out the weighted sum of the values "
                   "(T^2 d instead of 2 T^2 d for the attention part)",
        "code": '''
T_seq, d_seq = 1024, 768
answer = 4 * T_seq * d_seq * d_seq + T_seq * T_seq * d_seq
''',
    },
    {
        "exercise": "07.4",
        "mistake": "counts the attention part for one head only (T^2 d_k with d_k = 64) and "
                   "forgets to multiply by the 12 heads",
        "code": '''
T_seq, d_seq, n_heads = 1024, 768, 12
d_head = d_seq // n_heads
answer = 4 * T_seq * d_seq * d_seq + 2 * T_seq * T_seq * d_head
''',
    },
    {
        "exercise": "07.4",
        "mistake": "counts only three projections (Q, K, V) and forgets the output projection W_O",
        "code": '''
T_seq, d_seq = 1024, 768
answer = 3 * T_seq * d_seq * d_seq + 2 * T_seq * T_seq * d_seq
''',
    },
    # ------------------------------------------------------------------ 07.5
    {
        "exercise": "07.5",
        "mistake": "counts only the cached keys and forgets that the values are cached too "
                   "(missing factor 2)",
        "code": '''
L_kv, d_kv, h_q, h_kv, T_kv = 80, 8192, 64, 8, 4096
d_head = d_kv // h_q
answer = L_kv * h_kv * d_head * T_kv * 2
''',
    },
    {
        "exercise": "07.5",
        "mistake": "ignores grouped-query attention and caches all 64 query heads' keys and "
                   "values (the standard multi-head size, 8 times too big)",
        "code": '''
L_kv, d_kv, h_q, T_kv = 80, 8192, 64, 4096
d_head = d_kv // h_q
answer = 2 * L_kv * h_q * d_head * T_kv * 2
''',
    },
    {
        "exercise": "07.5",
        "mistake": "gives the cache of a single layer: forgets to multiply by the 80 layers",
        "code": '''
d_kv, h_q, h_kv, T_kv = 8192, 64, 8, 4096
d_head = d_kv // h_q
answer = 2 * h_kv * d_head * T_kv * 2
''',
    },
    {
        "exercise": "07.5",
        "mistake": "counts 4 bytes per number (float32) although the cache is stored in 16-bit "
                   "numbers (2 bytes)",
        "code": '''
L_kv, d_kv, h_q, h_kv, T_kv = 80, 8192, 64, 8, 4096
d_head = d_kv // h_q
answer = 2 * L_kv * h_kv * d_head * T_kv * 4
''',
    },
    {
        "exercise": "07.5",
        "mistake": "gives the size in GiB (1.25, a float) although the answer is asked in bytes, "
                   "as an integer",
        "code": '''
L_kv, d_kv, h_q, h_kv, T_kv = 80, 8192, 64, 8, 4096
d_head = d_kv // h_q
answer = 2 * L_kv * h_kv * d_head * T_kv * 2 / 2**30
''',
    },
    # ------------------------------------------------------------------ 07.6
    {
        "exercise": "07.6",
        "mistake": "forgets to scale the scores by 1/sqrt(d_k) before the softmax",
        "code": '''
def multihead_attention(
    x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask=None
):
    B_, T_, d_ = x.shape
    d_k = d_ // n_heads
    q = (x @ W_Q + b_Q).view(B_, T_, n_heads, d_k).transpose(1, 2)
    k = (x @ W_K + b_K).view(B_, T_, n_heads, d_k).transpose(1, 2)
    v = (x @ W_V + b_V).view(B_, T_, n_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    heads = (weights @ v).transpose(1, 2).reshape(B_, T_, d_)
    return heads @ W_O + b_O


answer = multihead_attention
''',
    },
    {
        "exercise": "07.6",
        "mistake": "applies the mask after the softmax (zeroes the forbidden weights) without "
                   "renormalising, so the rows of the causal weights no longer sum to 1",
        "code": '''
def multihead_attention(
    x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask=None
):
    B_, T_, d_ = x.shape
    d_k = d_ // n_heads
    q = (x @ W_Q + b_Q).view(B_, T_, n_heads, d_k).transpose(1, 2)
    k = (x @ W_K + b_K).view(B_, T_, n_heads, d_k).transpose(1, 2)
    v = (x @ W_V + b_V).view(B_, T_, n_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    heads = (weights @ v).transpose(1, 2).reshape(B_, T_, d_)
    return heads @ W_O + b_O


answer = multihead_attention
''',
    },
    {
        "exercise": "07.6",
        "mistake": "splits the heads with a single view to (B, h, T, d_k) instead of viewing as "
                   "(B, T, h, d_k) and transposing, so each 'head' mixes features of different "
                   "positions",
        "code": '''
def multihead_attention(
    x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask=None
):
    B_, T_, d_ = x.shape
    d_k = d_ // n_heads
    q = (x @ W_Q + b_Q).view(B_, n_heads, T_, d_k)
    k = (x @ W_K + b_K).view(B_, n_heads, T_, d_k)
    v = (x @ W_V + b_V).view(B_, n_heads, T_, d_k)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    heads = (weights @ v).reshape(B_, T_, d_)
    return heads @ W_O + b_O


answer = multihead_attention
''',
    },
    {
        "exercise": "07.6",
        "mistake": "takes the softmax over the queries axis (dim=-2) instead of over the keys "
                   "(dim=-1)",
        "code": '''
def multihead_attention(
    x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask=None
):
    B_, T_, d_ = x.shape
    d_k = d_ // n_heads
    q = (x @ W_Q + b_Q).view(B_, T_, n_heads, d_k).transpose(1, 2)
    k = (x @ W_K + b_K).view(B_, T_, n_heads, d_k).transpose(1, 2)
    v = (x @ W_V + b_V).view(B_, T_, n_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-2)
    heads = (weights @ v).transpose(1, 2).reshape(B_, T_, d_)
    return heads @ W_O + b_O


answer = multihead_attention
''',
    },
    {
        "exercise": "07.6",
        "mistake": "uses PyTorch's mask convention: fills -inf where the mask is True (allowed) "
                   "instead of where it is False, so the causal mask hides the past and the "
                   "last row is all -inf (NaN)",
        "code": '''
def multihead_attention(
    x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask=None
):
    B_, T_, d_ = x.shape
    d_k = d_ // n_heads
    q = (x @ W_Q + b_Q).view(B_, T_, n_heads, d_k).transpose(1, 2)
    k = (x @ W_K + b_K).view(B_, T_, n_heads, d_k).transpose(1, 2)
    v = (x @ W_V + b_V).view(B_, T_, n_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    heads = (weights @ v).transpose(1, 2).reshape(B_, T_, d_)
    return heads @ W_O + b_O


answer = multihead_attention
''',
    },
    {
        "exercise": "07.6",
        "mistake": "forgets the output bias b_O (returns heads @ W_O)",
        "code": '''
def multihead_attention(
    x, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O, n_heads, mask=None
):
    B_, T_, d_ = x.shape
    d_k = d_ // n_heads
    q = (x @ W_Q + b_Q).view(B_, T_, n_heads, d_k).transpose(1, 2)
    k = (x @ W_K + b_K).view(B_, T_, n_heads, d_k).transpose(1, 2)
    v = (x @ W_V + b_V).view(B_, T_, n_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    heads = (weights @ v).transpose(1, 2).reshape(B_, T_, d_)
    return heads @ W_O


answer = multihead_attention
''',
    },
    # ------------------------------------------------------------------ 07.7
    {
        "exercise": "07.7",
        "mistake": "ignores the budget of two runs and tries all 16 inputs until one fails: finds a "
                   "failure of this model but proves nothing about the others",
        "code": '''
def find_failure(predict):
    """An input (a, b) = (x[t-1], x[t-2]) that the model gets wrong."""
    for a in range(4):
        for b in range(4):
            if predict(a, b) != a - b:
                return (a, b)
    return (0, 0)
''',
    },
    {
        "exercise": "07.7",
        "mistake": "remembers the chapter's conclusion that (1, 1) is the input that fails and "
                   "returns it without running the model, although (1, 1) is only wrong when "
                   "(0, 0) and (1, 0) are answered right",
        "code": '''
def find_failure(predict):
    """An input (a, b) = (x[t-1], x[t-2]) that the model gets wrong."""
    return (1, 1)
''',
    },
    {
        "exercise": "07.7",
        "mistake": "gets the sign of the difference backwards (takes the right answer to be "
                   "x[t-2] - x[t-1]), so it expects -1 at (1, 0) and returns (1, 0) when the model "
                   "answers it correctly with +1",
        "code": '''
def find_failure(predict):
    """An input (a, b) = (x[t-1], x[t-2]) that the model gets wrong."""
    if predict(0, 0) != 0:
        return (0, 0)
    if predict(1, 0) != -1:
        return (1, 0)
    return (1, 1)
''',
    },
    {
        "exercise": "07.7",
        "mistake": "uses the right two runs but falls back on (0, 1) instead of (1, 1): the "
                   "argument only shows that class +1 still beats 0 at tau = w1 + w2, and (0, 1) "
                   "(tau = w2) can be answered -1 correctly",
        "code": '''
def find_failure(predict):
    """An input (a, b) = (x[t-1], x[t-2]) that the model gets wrong."""
    if predict(0, 0) != 0:
        return (0, 0)
    if predict(1, 0) != 1:
        return (1, 0)
    return (0, 1)
''',
    },
    {
        "exercise": "07.7",
        "mistake": "spends a third run to check (0, 1) as well before returning (1, 1), "
                   "exceeding the limit of two runs the exercise sets",
        "code": '''
def find_failure(predict):
    """An input (a, b) = (x[t-1], x[t-2]) that the model gets wrong."""
    if predict(0, 0) != 0:
        return (0, 0)
    if predict(1, 0) != 1:
        return (1, 0)
    if predict(0, 1) != -1:
        return (0, 1)
    return (1, 1)
''',
    },
    # ------------------------------------------------------------------ 07.8
    {
        "exercise": "07.8",
        "mistake": "forgets that nn.Linear stores W_O transposed and zeroes the head's block of "
                   "rows of attn.W_O.weight (output features of the layer) instead of its block of "
                   "columns (the head's rows of W_O)",
        "code": '''
def ablate(model, head):
    """Accuracy on two_reads.test_batch() with `head` zero-ablated."""
    attn = model.blocks[0].attn
    block = slice(head * attn.d_k, (head + 1) * attn.d_k)
    saved = attn.W_O.weight.detach().clone()
    try:
        with torch.no_grad():
            attn.W_O.weight[block, :] = 0.0
        return two_reads.accuracy(model)
    finally:
        with torch.no_grad():
            attn.W_O.weight.copy_(saved)


without = [ablate(model, head) for head in (0, 1)]
worse = int(np.argmin(without))
''',
    },
    {
        "exercise": "07.8",
        "mistake": "zeroes the head's columns of W_O in place and never restores them, so the "
                   "model stays damaged: the second ablation runs with both heads off",
        "code": '''
def ablate(model, head):
    """Accuracy on two_reads.test_batch() with `head` zero-ablated."""
    attn = model.blocks[0].attn
    with torch.no_grad():
        attn.W_O.weight[:, head * attn.d_k:(head + 1) * attn.d_k] = 0.0
    return two_reads.accuracy(model)


without = [ablate(model, head) for head in (0, 1)]
worse = int(np.argmin(without))
''',
    },
    {
        "exercise": "07.8",
        "mistake": "mean-ablates instead of zero-ablating: the head_hook replaces the head's "
                   "output by its average over the batch and positions, not by zeros",
        "code": '''
def ablate(model, head):
    """Accuracy on two_reads.test_batch() with `head` zero-ablated."""
    attn = model.blocks[0].attn

    def hook(heads):
        heads = heads.clone()
        heads[:, head] = heads[:, head].mean(dim=(0, 1), keepdim=True)
        return heads

    attn.head_hook = hook
    try:
        return two_reads.accuracy(model)
    finally:
        attn.head_hook = None


without = [ablate(model, head) for head in (0, 1)]
worse = int(np.argmin(without))
''',
    },
    {
        "exercise": "07.8",
        "mistake": "ablation is right, but picks the head whose ablation leaves the higher "
                   "accuracy (argmax), i.e. the head that matters less",
        "code": '''
def ablate(model, head):
    """Accuracy on two_reads.test_batch() with `head` zero-ablated."""
    attn = model.blocks[0].attn

    def hook(heads):
        heads = heads.clone()
        heads[:, head] = 0.0
        return heads

    attn.head_hook = hook
    try:
        return two_reads.accuracy(model)
    finally:
        attn.head_hook = None


without = [ablate(model, head) for head in (0, 1)]
worse = int(np.argmax(without))  # the bigger number is the worse head
''',
    },
    {
        "exercise": "07.8",
        "mistake": "computes the accuracy by hand over every position, t = 0 and 1 included, "
                   "where the difference is not defined, instead of the positions t >= 2",
        "code": '''
def ablate(model, head):
    """Accuracy on two_reads.test_batch() with `head` zero-ablated."""
    attn = model.blocks[0].attn

    def hook(heads):
        heads = heads.clone()
        heads[:, head] = 0.0
        return heads

    attn.head_hook = hook
    try:
        x, targets = two_reads.test_batch()
        with torch.no_grad():
            predictions = model(x).argmax(-1)
        return float((predictions == targets).float().mean())
    finally:
        attn.head_hook = None


without = [ablate(model, head) for head in (0, 1)]
worse = int(np.argmin(without))
''',
    },
    {
        "exercise": "07.8",
        "mistake": "numbers the heads from 1 like the chapter's prose ('the first head'): "
                   "worse is 1 or 2 instead of 0 or 1",
        "code": '''
def ablate(model, head):
    """Accuracy on two_reads.test_batch() with `head` zero-ablated."""
    attn = model.blocks[0].attn
    block = slice(head * attn.d_k, (head + 1) * attn.d_k)
    saved = attn.W_O.weight.detach().clone()
    try:
        with torch.no_grad():
            attn.W_O.weight[:, block] = 0.0
        return two_reads.accuracy(model)
    finally:
        with torch.no_grad():
            attn.W_O.weight.copy_(saved)


without = [ablate(model, head) for head in (0, 1)]
worse = int(np.argmin(without)) + 1  # head 1 or head 2
''',
    },
    # ------------------------------------------------------------------ 07.9
    {
        "exercise": "07.9",
        "mistake": "counts every singular value that is not exactly zero (tolerance 0): the "
                   "rounding noise of float32 makes every circuit look full rank, 64",
        "code": '''
def qk_circuit(layer, i):
    d_k, g = layer.d_k, i // (layer.n_heads // layer.n_kv_heads)
    W_Q = layer.W_Q.weight.detach().T
    W_K = layer.W_K.weight.detach().T
    return W_Q[:, i * d_k:(i + 1) * d_k] @ W_K[:, g * d_k:(g + 1) * d_k].T


def ov_circuit(layer, i):
    d_k, g = layer.d_k, i // (layer.n_heads // layer.n_kv_heads)
    W_V = layer.W_V.weight.detach().T
    W_O = layer.W_O.weight.detach().T
    return W_V[:, g * d_k:(g + 1) * d_k] @ W_O[i * d_k:(i + 1) * d_k]


def rank(matrix):
    return int((torch.linalg.svdvals(matrix) > 0).sum())


answer = {
    "qk": [rank(qk_circuit(layer, i)) for i in range(4)],
    "ov": [rank(ov_circuit(layer, i)) for i in range(4)],
    "ov_pair": rank(ov_circuit(layer, 0) + ov_circuit(layer, 1)),
    "ov_layer": rank(sum(ov_circuit(layer, i) for i in range(4))),
    "gqa_ov_pair": rank(ov_circuit(gqa, 0) + ov_circuit(gqa, 1)),
    "gqa_ov_layer": rank(sum(ov_circuit(gqa, i) for i in range(4))),
}
''',
    },
    {
        "exercise": "07.9",
        "mistake": "uses an absolute tolerance (singular values above 1e-3 count), which depends "
                   "on the matrix's scale: right for these layers, wrong for a matrix scaled up "
                   "or down",
        "code": '''
def qk_circuit(layer, i):
    d_k, g = layer.d_k, i // (layer.n_heads // layer.n_kv_heads)
    W_Q = layer.W_Q.weight.detach().T
    W_K = layer.W_K.weight.detach().T
    return W_Q[:, i * d_k:(i + 1) * d_k] @ W_K[:, g * d_k:(g + 1) * d_k].T


def ov_circuit(layer, i):
    d_k, g = layer.d_k, i // (layer.n_heads // layer.n_kv_heads)
    W_V = layer.W_V.weight.detach().T
    W_O = layer.W_O.weight.detach().T
    return W_V[:, g * d_k:(g + 1) * d_k] @ W_O[i * d_k:(i + 1) * d_k]


def rank(matrix):
    return int((torch.linalg.svdvals(matrix) > 1e-3).sum())


answer = {
    "qk": [rank(qk_circuit(layer, i)) for i in range(4)],
    "ov": [rank(ov_circuit(layer, i)) for i in range(4)],
    "ov_pair": rank(ov_circuit(layer, 0) + ov_circuit(layer, 1)),
    "ov_layer": rank(sum(ov_circuit(layer, i) for i in range(4))),
    "gqa_ov_pair": rank(ov_circuit(gqa, 0) + ov_circuit(gqa, 1)),
    "gqa_ov_layer": rank(sum(ov_circuit(gqa, i) for i in range(4))),
}
''',
    },
    {
        "exercise": "07.9",
        "mistake": "forgets that nn.Linear stores its weight as (out, in) and uses it as the row "
                   "convention's W_Q, W_K, W_V, W_O without transposing: the slices take the "
                   "wrong axis and the circuits are not the heads' (the ranks still come out 16)",
        "code": '''
def qk_circuit(layer, i):
    d_k, g = layer.d_k, i // (layer.n_heads // layer.n_kv_heads)
    W_Q = layer.W_Q.weight.detach()  # (out, in), taken for x @ W_Q
    W_K = layer.W_K.weight.detach()
    return W_Q[:, i * d_k:(i + 1) * d_k] @ W_K[:, g * d_k:(g + 1) * d_k].T


def ov_circuit(layer, i):
    d_k, g = layer.d_k, i // (layer.n_heads // layer.n_kv_heads)
    W_V = layer.W_V.weight.detach()
    W_O = layer.W_O.weight.detach()
    return W_V[:, g * d_k:(g + 1) * d_k] @ W_O[i * d_k:(i + 1) * d_k]


def rank(matrix):
    return int(torch.linalg.matrix_rank(matrix))


answer = {
    "qk": [rank(qk_circuit(layer, i)) for i in range(4)],
    "ov": [rank(ov_circuit(layer, i)) for i in range(4)],
    "ov_pair": rank(ov_circuit(layer, 0) + ov_circuit(layer, 1)),
    "ov_layer": rank(sum(ov_circuit(layer, i) for i in range(4))),
    "gqa_ov_pair": rank(ov_circuit(gqa, 0) + ov_circuit(gqa, 1)),
    "gqa_ov_layer": rank(sum(ov_circuit(gqa, i) for i in range(4))),
}
''',
    },
    {
        "exercise": "07.9",
        "mistake": "assigns query heads to key/value heads round-robin (i mod h_kv) instead of "
                   "in consecutive groups (i // (h / h_kv)): in gqa heads 0 and 1 then read "
                   "different value heads and their sum looks like rank 32",
        "code": '''
def qk_circuit(layer, i):
    d_k, g = layer.d_k, i % layer.n_kv_heads
    W_Q = layer.W_Q.weight.detach().T
    W_K = layer.W_K.weight.detach().T
    return W_Q[:, i * d_k:(i + 1) * d_k] @ W_K[:, g * d_k:(g + 1) * d_k].T


def ov_circuit(layer, i):
    d_k, g = layer.d_k, i % layer.n_kv_heads
    W_V = layer.W_V.weight.detach().T
    W_O = layer.W_O.weight.detach().T
    return W_V[:, g * d_k:(g + 1) * d_k] @ W_O[i * d_k:(i + 1) * d_k]


def rank(matrix):
    return int(torch.linalg.matrix_rank(matrix))


answer = {
    "qk": [rank(qk_circuit(layer, i)) for i in range(4)],
    "ov": [rank(ov_circuit(layer, i)) for i in range(4)],
    "ov_pair": rank(ov_circuit(layer, 0) + ov_circuit(layer, 1)),
    "ov_layer": rank(sum(ov_circuit(layer, i) for i in range(4))),
    "gqa_ov_pair": rank(ov_circuit(gqa, 0) + ov_circuit(gqa, 1)),
    "gqa_ov_layer": rank(sum(ov_circuit(gqa, i) for i in range(4))),
}
''',
    },
    {
        "exercise": "07.9",
        "mistake": "writes the ranks down from the multi-head bounds instead of computing them, "
                   "and applies them to gqa too: 2 d_k = 32 and min(d, h d_k) = 64, although "
                   "gqa's heads 0 and 1 share one value head and its W_V is only 32 wide",
        "code": '''
def qk_circuit(layer, i):
    d_k, g = layer.d_k, i // (layer.n_heads // layer.n_kv_heads)
    W_Q = layer.W_Q.weight.detach().T
    W_K = layer.W_K.weight.detach().T
    return W_Q[:, i * d_k:(i + 1) * d_k] @ W_K[:, g * d_k:(g + 1) * d_k].T


def ov_circuit(layer, i):
    d_k, g = layer.d_k, i // (layer.n_heads // layer.n_kv_heads)
    W_V = layer.W_V.weight.detach().T
    W_O = layer.W_O.weight.detach().T
    return W_V[:, g * d_k:(g + 1) * d_k] @ W_O[i * d_k:(i + 1) * d_k]


def rank(matrix):
    return int(torch.linalg.matrix_rank(matrix))


# every product passes through d_k per head, so the bounds are the ranks
answer = {
    "qk": [16] * 4,
    "ov": [16] * 4,
    "ov_pair": 32,
    "ov_layer": 64,
    "gqa_ov_pair": 32,
    "gqa_ov_layer": 64,
}
''',
    },
    {
        "exercise": "07.9",
        "mistake": "rank returns torch.linalg.matrix_rank's 0-d tensor instead of a Python int, "
                   "so every rank in the answer is a tensor",
        "code": '''
def qk_circuit(layer, i):
    d_k, g = layer.d_k, i // (layer.n_heads // layer.n_kv_heads)
    W_Q = layer.W_Q.weight.detach().T
    W_K = layer.W_K.weight.detach().T
    return W_Q[:, i * d_k:(i + 1) * d_k] @ W_K[:, g * d_k:(g + 1) * d_k].T


def ov_circuit(layer, i):
    d_k, g = layer.d_k, i // (layer.n_heads // layer.n_kv_heads)
    W_V = layer.W_V.weight.detach().T
    W_O = layer.W_O.weight.detach().T
    return W_V[:, g * d_k:(g + 1) * d_k] @ W_O[i * d_k:(i + 1) * d_k]


def rank(matrix):
    return torch.linalg.matrix_rank(matrix)


answer = {
    "qk": [rank(qk_circuit(layer, i)) for i in range(4)],
    "ov": [rank(ov_circuit(layer, i)) for i in range(4)],
    "ov_pair": rank(ov_circuit(layer, 0) + ov_circuit(layer, 1)),
    "ov_layer": rank(sum(ov_circuit(layer, i) for i in range(4))),
    "gqa_ov_pair": rank(ov_circuit(gqa, 0) + ov_circuit(gqa, 1)),
    "gqa_ov_layer": rank(sum(ov_circuit(gqa, i) for i in range(4))),
}
''',
    },
]
