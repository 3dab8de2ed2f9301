"""Learner mistakes for chapter 12's exercises, written without reading the checkers."""

MISTAKES = [
    # ------------------------------------------------------------------ 12.1
    {
        "exercise": "12.1",
        "mistake": "divides the sum of the T - 1 previous-token weights by T, counting position 0 "
                   "(which has no previous token) in the mean",
        "code": '''
def previous_token_score(weights):
    T = weights.shape[-1]
    return float(torch.diagonal(weights, offset=-1).sum() / T)


answer = previous_token_score
''',
    },
    {
        "exercise": "12.1",
        "mistake": "reads the wrong diagonal: offset=+1 is the weight of query t-1 on key t "
                   "(rows and columns swapped), which a causal pattern makes 0",
        "code": '''
def previous_token_score(weights):
    return float(torch.diagonal(weights, offset=1).mean())


answer = previous_token_score
''',
    },
    {
        "exercise": "12.1",
        "mistake": "off by one: averages weights[t, t] (each query's weight on itself) instead "
                   "of weights[t, t - 1]",
        "code": '''
def previous_token_score(weights):
    T = weights.shape[-1]
    return float(torch.stack([weights[t, t] for t in range(1, T)]).mean())


answer = previous_token_score
''',
    },
    {
        "exercise": "12.1",
        "mistake": "right value but returns a 0-dimensional tensor instead of the float the "
                   "statement asks for",
        "code": '''
def previous_token_score(weights):
    return torch.diagonal(weights, offset=-1).mean()


answer = previous_token_score
''',
    },
    {
        "exercise": "12.1",
        "mistake": "loops over range(1, T) with the notebook's global T = 5 instead of the size "
                   "of the weights it is given: right on the 5 x 5 examples only",
        "code": '''
def previous_token_score(weights):
    return float(sum(weights[t, t - 1] for t in range(1, T)) / (T - 1))


answer = previous_token_score
''',
    },
    # ------------------------------------------------------------------ 12.2
    {
        "exercise": "12.2",
        "mistake": "measures the weight on the earlier occurrence itself (key t - L) instead of "
                   "the token after it (key t - L + 1)",
        "code": '''
def induction_score(weights, L):
    T = weights.shape[-1]
    return float(torch.stack([weights[t, t - L] for t in range(L + 1, T)]).mean())


answer = induction_score
''',
    },
    {
        "exercise": "12.2",
        "mistake": "off by one in the queries: starts at t = L, the last token of the first copy, "
                   "which has no earlier occurrence",
        "code": '''
def induction_score(weights, L):
    T = weights.shape[-1]
    return float(torch.stack([weights[t, t - L + 1] for t in range(L, T)]).mean())


answer = induction_score
''',
    },
    {
        "exercise": "12.2",
        "mistake": "forgets the BOS token: takes the second copy to be positions L ... 2L - 1 "
                   "(as if T = 2L), so it skips the last query and includes the first copy's last",
        "code": '''
def induction_score(weights, L):
    return float(torch.stack([weights[t, t - L + 1] for t in range(L, 2 * L)]).mean())


answer = induction_score
''',
    },
    {
        "exercise": "12.2",
        "mistake": "sums the L target weights instead of averaging them (a perfect head scores L, "
                   "not 1)",
        "code": '''
def induction_score(weights, L):
    T = weights.shape[-1]
    return float(sum(weights[t, t - L + 1] for t in range(L + 1, T)))


answer = induction_score
''',
    },
    {
        "exercise": "12.2",
        "mistake": "swaps the indices: reads weights[t - L + 1, t] (the earlier query's weight on "
                   "the later key), which the causal mask makes 0",
        "code": '''
def induction_score(weights, L):
    T = weights.shape[-1]
    return float(torch.stack([weights[t - L + 1, t] for t in range(L + 1, T)]).mean())


answer = induction_score
''',
    },
    # ------------------------------------------------------------------ 12.3
    {
        "exercise": "12.3",
        "mistake": "adds the four fractions but forgets to divide by 4 (a sum, not a mean)",
        "code": '''
answer = 1 / 6 + 1 / 7 + 1 / 8 + 1 / 9
''',
    },
    {
        "exercise": "12.3",
        "mistake": "off by one in the uniform weight: uses 1/t instead of 1/(t + 1) for query t "
                   "(forgets that a query also sees itself)",
        "code": '''
answer = (1 / 5 + 1 / 6 + 1 / 7 + 1 / 8) / 4
''',
    },
    {
        "exercise": "12.3",
        "mistake": "ignores causality: gives every key weight 1/T = 1/9 for every query",
        "code": '''
answer = 1 / 9
''',
    },
    {
        "exercise": "12.3",
        "mistake": "adds the fractions wrongly, numerators over denominators: "
                   "(1+1+1+1)/(6+7+8+9) = 4/30",
        "code": '''
answer = (1 + 1 + 1 + 1) / (6 + 7 + 8 + 9)
''',
    },
    # ------------------------------------------------------------------ 12.4
    {
        "exercise": "12.4",
        "mistake": "zeroes the head in the hook's input in place (no clone), which the statement "
                   "forbids: the caller's tensor is modified",
        "code": '''
def zero_ablation(head):
    def hook(outputs):
        outputs[:, head] = 0.0
        return outputs

    return hook


answer = zero_ablation
''',
    },
    {
        "exercise": "12.4",
        "mistake": "indexes the wrong axis: outputs[..., head] zeroes feature `head` of every "
                   "head's d_k outputs instead of the whole head (axis 1 of (B, h, T, d_k))",
        "code": '''
def zero_ablation(head):
    def hook(outputs):
        outputs = outputs.clone()
        outputs[..., head] = 0.0
        return outputs

    return hook


answer = zero_ablation
''',
    },
    {
        "exercise": "12.4",
        "mistake": "inverts the ablation: keeps only head `head` and zeroes all the others",
        "code": '''
def zero_ablation(head):
    def hook(outputs):
        kept = torch.zeros_like(outputs)
        kept[:, head] = outputs[:, head]
        return kept

    return hook


answer = zero_ablation
''',
    },
    {
        "exercise": "12.4",
        "mistake": "mean-ablates instead of zero-ablating: replaces the head's output by its mean "
                   "over the batch and positions",
        "code": '''
def zero_ablation(head):
    def hook(outputs):
        outputs = outputs.clone()
        outputs[:, head] = outputs[:, head].mean(dim=(0, 1), keepdim=True)
        return outputs

    return hook


answer = zero_ablation
''',
    },
    {
        "exercise": "12.4",
        "mistake": "zeroes a clone but returns the original tensor, so the hook changes nothing",
        "code": '''
def zero_ablation(head):
    def hook(outputs):
        ablated = outputs.clone()
        ablated[:, head] = 0.0
        return outputs

    return hook


answer = zero_ablation
''',
    },
    # ------------------------------------------------------------------ 12.5
    {
        "exercise": "12.5",
        "mistake": "counts layers from 1 instead of 0 (the statement counts layers and heads "
                   "from 0)",
        "code": '''
# By content, the induction head must find the position whose previous token is the current
# token; only a previous-token head in an earlier layer can have written that there.
def all_scores(model, L):
    tokens = fixed_length_batch(settings.n_vocab, 64, L, seed=100 + L).tokens
    for block in model.blocks:
        block.attn.record = True
    with torch.no_grad():
        model(tokens)
    scores = {}
    for layer, block in enumerate(model.blocks):
        block.attn.record = False
        weights = block.attn.last_weights.mean(dim=0)
        for head in range(weights.shape[0]):
            scores[(layer + 1, head)] = (previous_token_score(weights[head]),
                                         induction_score(weights[head], L))
    return scores


short, long = all_scores(model, 10), all_scores(model, 20)
lower = {k: (min(short[k][0], long[k][0]), min(short[k][1], long[k][1])) for k in short}
answer = {"previous-token": max(lower, key=lambda k: lower[k][0]),
          "induction": max(lower, key=lambda k: lower[k][1])}
''',
    },
    {
        "exercise": "12.5",
        "mistake": "passes the weights transposed (keys as rows, queries as columns) to the "
                   "score functions: every score is 0, so max() just returns the first head, (0, 0), for "
                   "both",
        "code": '''
# The induction head needs a previous-token head before it.
def all_scores(model, L):
    tokens = fixed_length_batch(settings.n_vocab, 64, L, seed=100 + L).tokens
    for block in model.blocks:
        block.attn.record = True
    with torch.no_grad():
        model(tokens)
    scores = {}
    for layer, block in enumerate(model.blocks):
        block.attn.record = False
        weights = block.attn.last_weights.mean(dim=0).transpose(-1, -2)
        for head in range(weights.shape[0]):
            scores[(layer, head)] = (previous_token_score(weights[head]),
                                     induction_score(weights[head], L))
    return scores


short, long = all_scores(model, 10), all_scores(model, 20)
lower = {k: (min(short[k][0], long[k][0]), min(short[k][1], long[k][1])) for k in short}
answer = {"previous-token": max(lower, key=lambda k: lower[k][0]),
          "induction": max(lower, key=lambda k: lower[k][1])}
''',
    },
    {
        "exercise": "12.5",
        "mistake": "averages last_weights (B, h, T, T) over the heads axis (dim=1) instead of "
                   "the batch, then loops over the first axis, scoring batch items as if they "
                   "were heads",
        "code": '''
# The induction head reads "my previous token was A", written by a previous-token head.
def all_scores(model, L):
    tokens = fixed_length_batch(settings.n_vocab, 64, L, seed=100 + L).tokens
    for block in model.blocks:
        block.attn.record = True
    with torch.no_grad():
        model(tokens)
    scores = {}
    for layer, block in enumerate(model.blocks):
        block.attn.record = False
        weights = block.attn.last_weights.mean(dim=1)
        for head in range(weights.shape[0]):
            scores[(layer, head)] = (previous_token_score(weights[head]),
                                     induction_score(weights[head], L))
    return scores


short, long = all_scores(model, 10), all_scores(model, 20)
lower = {k: (min(short[k][0], long[k][0]), min(short[k][1], long[k][1])) for k in short}
answer = {"previous-token": max(lower, key=lambda k: lower[k][0]),
          "induction": max(lower, key=lambda k: lower[k][1])}
''',
    },
    {
        "exercise": "12.5",
        "mistake": "mixes up the two scores: names the head with the best induction score the "
                   "previous-token head and vice versa",
        "code": '''
# A head that works by content needs a previous-token head earlier.
def all_scores(model, L):
    tokens = fixed_length_batch(settings.n_vocab, 64, L, seed=100 + L).tokens
    for block in model.blocks:
        block.attn.record = True
    with torch.no_grad():
        model(tokens)
    scores = {}
    for layer, block in enumerate(model.blocks):
        block.attn.record = False
        weights = block.attn.last_weights.mean(dim=0)
        for head in range(weights.shape[0]):
            scores[(layer, head)] = (induction_score(weights[head], L),
                                     previous_token_score(weights[head]))
    return scores


short, long = all_scores(model, 10), all_scores(model, 20)
lower = {k: (min(short[k][0], long[k][0]), min(short[k][1], long[k][1])) for k in short}
answer = {"previous-token": max(lower, key=lambda k: lower[k][0]),
          "induction": max(lower, key=lambda k: lower[k][1])}
''',
    },
    {
        "exercise": "12.5",
        "mistake": "numbers the heads from 1 (head 1, head 2) although the statement counts "
                   "layers and heads from 0",
        "code": '''
# By content needs a previous-token head in an earlier layer; by position needs none but only
# works at one length.
def all_scores(model, L):
    tokens = fixed_length_batch(settings.n_vocab, 64, L, seed=100 + L).tokens
    for block in model.blocks:
        block.attn.record = True
    with torch.no_grad():
        model(tokens)
    scores = {}
    for layer, block in enumerate(model.blocks):
        block.attn.record = False
        weights = block.attn.last_weights.mean(dim=0)
        for head in range(weights.shape[0]):
            scores[(layer, head + 1)] = (previous_token_score(weights[head]),
                                     induction_score(weights[head], L))
    return scores


short, long = all_scores(model, 10), all_scores(model, 20)
lower = {k: (min(short[k][0], long[k][0]), min(short[k][1], long[k][1])) for k in short}
answer = {"previous-token": max(lower, key=lambda k: lower[k][0]),
          "induction": max(lower, key=lambda k: lower[k][1])}
''',
    },
    # ------------------------------------------------------------------ 12.6
    {
        "exercise": "12.6",
        "mistake": "averages over the second-copy queries (t = L+1 ... 2L) instead of the "
                   "first-copy queries t = 1 ... L",
        "code": '''
layer, head = 1, int(induction[1].argmax())
attn = model.blocks[layer].attn
attn.record = True
with torch.no_grad():
    model(first.tokens)
attn.record = False
weights = attn.last_weights[:, head]
answer = float(weights[:, 17:33, 0].mean())
''',
    },
    {
        "exercise": "12.6",
        "mistake": "measures the previous-token head of layer 0 instead of the induction head",
        "code": '''
attn = model.blocks[0].attn
attn.record = True
with torch.no_grad():
    model(first.tokens)
attn.record = False
weights = attn.last_weights[:, prev_head]
answer = float(weights[:, 1:17, 0].mean())
''',
    },
    {
        "exercise": "12.6",
        "mistake": "swaps the query and key axes: reads weights[:, 0, 1:17], the BOS query's "
                   "weight on the later keys (0 under the causal mask)",
        "code": '''
layer, head = 1, int(induction[1].argmax())
attn = model.blocks[layer].attn
attn.record = True
with torch.no_grad():
    model(first.tokens)
attn.record = False
weights = attn.last_weights[:, head]
answer = float(weights[:, 0, 1:17].mean())
''',
    },
    {
        "exercise": "12.6",
        "mistake": "sums the BOS weight over the 16 queries instead of averaging (a number far "
                   "above 1, not a fraction)",
        "code": '''
layer, head = 1, int(induction[1].argmax())
attn = model.blocks[layer].attn
attn.record = True
with torch.no_grad():
    model(first.tokens)
attn.record = False
weights = attn.last_weights[:, head]
answer = float(weights[:, 1:17, 0].sum(dim=1).mean())
''',
    },
    # ------------------------------------------------------------------ 12.7
    {
        "exercise": "12.7",
        "mistake": "shifts in the wrong direction (the transpose of the shift): query t looks "
                   "for key t + 1, which the causal mask hides, so the visible scores are all "
                   "equal",
        "code": '''
n_ctx, d_token = 40, 16
P = torch.eye(n_ctx)
shift = torch.zeros(n_ctx, n_ctx)
shift[torch.arange(1, n_ctx), torch.arange(n_ctx - 1)] = 1.0
scale = 20 * math.sqrt(n_ctx)
W_Q = torch.cat([torch.zeros(d_token, n_ctx), scale * shift.T])
W_K = torch.cat([torch.zeros(d_token, n_ctx), torch.eye(n_ctx)])
answer = (P, W_Q, W_K)
''',
    },
    {
        "exercise": "12.7",
        "mistake": "lets the token embeddings into the score (identity on the token block "
                   "too): a query matches its own token strongly, so the score depends on "
                   "content, not on position only",
        "code": '''
n_ctx, d_token = 40, 16
P = torch.eye(n_ctx)
shift = torch.zeros(n_ctx, n_ctx)
shift[torch.arange(1, n_ctx), torch.arange(n_ctx - 1)] = 1.0
d_k = d_token + n_ctx
scale = 20 * math.sqrt(d_k)
W_Q = scale * torch.block_diag(torch.eye(d_token), shift)
W_K = torch.block_diag(torch.eye(d_token), torch.eye(n_ctx))
answer = (P, W_Q, W_K)
''',
    },
    {
        "exercise": "12.7",
        "mistake": "gives W_Q and W_K only the positional rows (d_pos, d_k), forgetting the 16 "
                   "rows that multiply the token part of x_t = [e_t, p_t]",
        "code": '''
n_ctx = 40
P = torch.eye(n_ctx)
shift = torch.zeros(n_ctx, n_ctx)
shift[torch.arange(1, n_ctx), torch.arange(n_ctx - 1)] = 1.0
W_Q = 20 * math.sqrt(n_ctx) * shift
W_K = torch.eye(n_ctx)
answer = (P, W_Q, W_K)
''',
    },
    {
        "exercise": "12.7",
        "mistake": "sizes the margin without the division by sqrt(d_k): a score of 20 becomes "
                   "20/sqrt(40) = 3.2, too small to beat up to 39 other keys in the softmax",
        "code": '''
n_ctx, d_token = 40, 16
P = torch.eye(n_ctx)
shift = torch.zeros(n_ctx, n_ctx)
shift[torch.arange(1, n_ctx), torch.arange(n_ctx - 1)] = 1.0
W_Q = torch.cat([torch.zeros(d_token, n_ctx), 20 * shift])
W_K = torch.cat([torch.zeros(d_token, n_ctx), torch.eye(n_ctx)])
answer = (P, W_Q, W_K)
''',
    },
    {
        "exercise": "12.7",
        "mistake": "forgets the shift: W_Q and W_K both pass the one-hot position through, so "
                   "each query matches its own position and the head attends to itself",
        "code": '''
n_ctx, d_token = 40, 16
P = torch.eye(n_ctx)
scale = 20 * math.sqrt(n_ctx)
W_Q = torch.cat([torch.zeros(d_token, n_ctx), scale * torch.eye(n_ctx)])
W_K = torch.cat([torch.zeros(d_token, n_ctx), torch.eye(n_ctx)])
answer = (P, W_Q, W_K)
''',
    },
]
