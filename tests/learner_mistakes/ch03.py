"""Learner mistakes for chapter 03's exercises, written without reading the checkers."""

MISTAKES = [
    # ----------------------------------------------------------------- 03.1
    {
        "exercise": "03.1",
        "mistake": "forgets the three biases b_Q, b_K, b_V (2 d_k + d_v = 640 parameters), "
                   "although the statement says all three projections have them",
        "code": '''
d, d_k, d_v = 512, 64, 512
count = 2 * d_k * d + d * d_v
answer = (count, count)
''',
    },
    {
        "exercise": "03.1",
        "mistake": "thinks the parameter count grows with the sequence length and doubles it "
                   "when T doubles; no parameter has a T axis",
        "code": '''
d, d_k, d_v = 512, 64, 512
count = 2 * d_k * d + d * d_v + 2 * d_k + d_v
answer = (count, 2 * count)
''',
    },
    {
        "exercise": "03.1",
        "mistake": "misreads the value width: takes d_v = d_k = 64 instead of d_v = d = 512",
        "code": '''
d, d_k = 512, 64
d_v = d_k
count = 2 * d_k * d + d * d_v + 2 * d_k + d_v
answer = (count, count)
''',
    },
    {
        "exercise": "03.1",
        "mistake": "adds an output projection W_O (d_v x d, with a bias of d) that a single head "
                   "of the chapter does not have",
        "code": '''
d, d_k, d_v = 512, 64, 512
count = 2 * d_k * d + d * d_v + 2 * d_k + d_v
count += d_v * d + d  # W_O and b_O
answer = (count, count)
''',
    },
    # ----------------------------------------------------------------- 03.2
    {
        "exercise": "03.2",
        "mistake": "forgets the 1/sqrt(d_k) scale: takes the softmax of Q K^T = I itself",
        "code": '''
Q = K = torch.eye(2)
V = torch.tensor([[2.0, 0.0], [0.0, 4.0]])
scores = Q @ K.T
weights = torch.exp(scores) / torch.exp(scores).sum(dim=-1, keepdim=True)
outputs = weights @ V
answer = (weights, outputs)
''',
    },
    {
        "exercise": "03.2",
        "mistake": "multiplies in the wrong order, V A instead of A V: the outputs come out "
                   "transposed",
        "code": '''
Q = K = torch.eye(2)
V = torch.tensor([[2.0, 0.0], [0.0, 4.0]])
scores = Q @ K.T / math.sqrt(2)
weights = torch.exp(scores) / torch.exp(scores).sum(dim=-1, keepdim=True)
outputs = V @ weights
answer = (weights, outputs)
''',
    },
    {
        "exercise": "03.2",
        "mistake": "divides the scores by d_k = 2 instead of sqrt(d_k)",
        "code": '''
Q = K = torch.eye(2)
V = torch.tensor([[2.0, 0.0], [0.0, 4.0]])
scores = Q @ K.T / 2
weights = torch.exp(scores) / torch.exp(scores).sum(dim=-1, keepdim=True)
outputs = weights @ V
answer = (weights, outputs)
''',
    },
    {
        "exercise": "03.2",
        "mistake": "gives the scaled score matrix in place of the softmax weights in the first "
                   "slot of the pair",
        "code": '''
Q = K = torch.eye(2)
V = torch.tensor([[2.0, 0.0], [0.0, 4.0]])
scores = Q @ K.T / math.sqrt(2)
weights = torch.exp(scores) / torch.exp(scores).sum(dim=-1, keepdim=True)
outputs = weights @ V
answer = (scores, outputs)
''',
    },
    {
        "exercise": "03.2",
        "mistake": "rounds the weights to two decimals by hand (0.67, 0.33) and computes the "
                   "outputs from them, although at least four decimals are asked for",
        "code": '''
weights = torch.tensor([[0.67, 0.33], [0.33, 0.67]])
V = torch.tensor([[2.0, 0.0], [0.0, 4.0]])
outputs = weights @ V
answer = (weights, outputs)
''',
    },
    # ----------------------------------------------------------------- 03.3
    {
        "exercise": "03.3",
        "mistake": "gives the (6, 3) outputs themselves instead of the single number "
                   "max |o_i - v|",
        "code": '''
v = torch.tensor([1.0, -2.0, 3.0])
values = v.expand(6, 3)
causal = torch.ones(6, 6, dtype=torch.bool).tril()
answer = tformer.scaled_dot_product_attention(queries, keys, values, causal).outputs
''',
    },
    {
        "exercise": "03.3",
        "mistake": "computes the attention by hand and masks after the softmax (zeroes the "
                   "future weights without renormalising), so the weights no longer sum to 1 "
                   "and the outputs are not v",
        "code": '''
v = torch.tensor([1.0, -2.0, 3.0])
values = v.expand(6, 3)
causal = torch.ones(6, 6, dtype=torch.bool).tril()
scores = queries @ keys.T / math.sqrt(8)
weights = torch.softmax(scores, dim=-1) * causal
outputs = weights @ values
answer = (outputs - v).abs().max().item()
''',
    },
    {
        "exercise": "03.3",
        "mistake": "off by one in the causal mask (tril(-1) hides the diagonal, so query 1 sees "
                   "no key), then silences the error with fully_masked='zero': query 1's output "
                   "is 0 and the deviation is 3 — exactly the premise that part (c) warns about",
        "code": '''
v = torch.tensor([1.0, -2.0, 3.0])
values = v.expand(6, 3)
causal = torch.ones(6, 6, dtype=torch.bool).tril(-1)
outputs = tformer.scaled_dot_product_attention(
    queries, keys, values, causal, fully_masked="zero"
).outputs
answer = (outputs - v).abs().max().item()
''',
    },
    {
        "exercise": "03.3",
        "mistake": "answers the yes/no question instead of the number: a boolean 'the outputs "
                   "equal v' where the largest deviation (a float) is asked for",
        "code": '''
v = torch.tensor([1.0, -2.0, 3.0])
values = v.expand(6, 3)
causal = torch.ones(6, 6, dtype=torch.bool).tril()
outputs = tformer.scaled_dot_product_attention(queries, keys, values, causal).outputs
answer = bool(torch.allclose(outputs, v.expand(6, 3)))
''',
    },
    # ----------------------------------------------------------------- 03.4
    {
        "exercise": "03.4",
        "mistake": "softmax without subtracting the maximum score: fine on random inputs, "
                   "overflows to nan for large scores",
        "code": '''
def attention_per_query(queries, keys, values):
    d_k = queries.shape[-1]
    rows = []
    for query in queries:
        scores = keys @ query / math.sqrt(d_k)
        weights = torch.exp(scores)
        weights = weights / weights.sum()
        rows.append(weights @ values)
    return torch.stack(rows)
''',
    },
    {
        "exercise": "03.4",
        "mistake": "forgets to divide the scores by sqrt(d_k): computes unscaled attention",
        "code": '''
def attention_per_query(queries, keys, values):
    rows = []
    for query in queries:
        scores = keys @ query
        weights = torch.exp(scores - scores.max())
        weights = weights / weights.sum()
        rows.append(weights @ values)
    return torch.stack(rows)
''',
    },
    {
        "exercise": "03.4",
        "mistake": "loops over range(len(keys)) instead of over the queries, assuming "
                   "T_q = T_k: wrong number of output rows (or an index error) when the numbers "
                   "of queries and keys differ",
        "code": '''
def attention_per_query(queries, keys, values):
    d_k = queries.shape[-1]
    rows = []
    for i in range(keys.shape[0]):
        scores = keys @ queries[i] / math.sqrt(d_k)
        weights = torch.exp(scores - scores.max())
        weights = weights / weights.sum()
        rows.append(weights @ values)
    return torch.stack(rows)
''',
    },
    {
        "exercise": "03.4",
        "mistake": "forgets to normalise: uses exp(s - max s) as the weights without dividing by "
                   "their sum",
        "code": '''
def attention_per_query(queries, keys, values):
    d_k = queries.shape[-1]
    rows = []
    for query in queries:
        scores = keys @ query / math.sqrt(d_k)
        weights = torch.exp(scores - scores.max())
        rows.append(weights @ values)
    return torch.stack(rows)
''',
    },
    # ----------------------------------------------------------------- 03.5
    {
        "exercise": "03.5",
        "mistake": "gives the two gaps in the wrong order (values only first, together second)",
        "code": '''
P = torch.eye(6)[perm]
attend = tformer.scaled_dot_product_attention
base = attend(queries, keys, values).outputs
together = attend(queries, P @ keys, P @ values).outputs
values_only = attend(queries, keys, P @ values).outputs
answer = (
    (values_only - base).abs().max().item(),
    (together - base).abs().max().item(),
)
''',
    },
    {
        "exercise": "03.5",
        "mistake": "for the second gap permutes only the keys instead of only the values",
        "code": '''
P = torch.eye(6)[perm]
attend = tformer.scaled_dot_product_attention
base = attend(queries, keys, values).outputs
together = attend(queries, P @ keys, P @ values).outputs
keys_only = attend(queries, P @ keys, values).outputs
answer = (
    (together - base).abs().max().item(),
    (keys_only - base).abs().max().item(),
)
''',
    },
    {
        "exercise": "03.5",
        "mistake": "permutes the keys with P but the values with P^T (the inverse permutation), "
                   "so keys and values fall out of step even in the 'together' case and its gap "
                   "is not zero",
        "code": '''
P = torch.eye(6)[perm]
attend = tformer.scaled_dot_product_attention
base = attend(queries, keys, values).outputs
together = attend(queries, P @ keys, P.T @ values).outputs
values_only = attend(queries, keys, P @ values).outputs
answer = (
    (together - base).abs().max().item(),
    (values_only - base).abs().max().item(),
)
''',
    },
    {
        "exercise": "03.5",
        "mistake": "measures the mean absolute change instead of the largest one",
        "code": '''
P = torch.eye(6)[perm]
attend = tformer.scaled_dot_product_attention
base = attend(queries, keys, values).outputs
together = attend(queries, P @ keys, P @ values).outputs
values_only = attend(queries, keys, P @ values).outputs
answer = (
    (together - base).abs().mean().item(),
    (values_only - base).abs().mean().item(),
)
''',
    },
    # ----------------------------------------------------------------- 03.6
    {
        "exercise": "03.6",
        "mistake": "forgets the batch: counts a single T x T score matrix instead of B of them",
        "code": '''
T = 512
n_scores = T * T
answer = (n_scores, 4 * n_scores, 4)
''',
    },
    {
        "exercise": "03.6",
        "mistake": "thinks the memory grows linearly with T: factor 2 instead of 4",
        "code": '''
B, T = 8, 512
n_scores = B * T * T
answer = (n_scores, 4 * n_scores, 2)
''',
    },
    {
        "exercise": "03.6",
        "mistake": "confuses S with Q: counts B x T x d_k entries (the queries) instead of "
                   "B x T x T scores, hence also a factor 2",
        "code": '''
B, T, d_k = 8, 512, 64
n_scores = B * T * d_k
answer = (n_scores, 4 * n_scores, 2)
''',
    },
    {
        "exercise": "03.6",
        "mistake": "bits instead of bytes: multiplies the entries by 32 (bits of a float32) "
                   "instead of 4",
        "code": '''
B, T = 8, 512
n_scores = B * T * T
answer = (n_scores, 32 * n_scores, 4)
''',
    },
    {
        "exercise": "03.6",
        "mistake": "gives the memory in MiB (8) instead of in bytes",
        "code": '''
B, T = 8, 512
n_scores = B * T * T
answer = (n_scores, 4 * n_scores / 2**20, 4)
''',
    },
    # ----------------------------------------------------------------- 03.7
    {
        "exercise": "03.7",
        "mistake": "integer division (//) truncates T* to 682, although the answer is asked for "
                   "unrounded (682.67)",
        "code": '''
d, d_k, d_v = 512, 64, 128
answer = d * (2 * d_k + d_v) // (d_k + d_v)
''',
    },
    {
        "exercise": "03.7",
        "mistake": "uses d_k for both quadratic terms (2 T^2 d_k), as if d_v were d_k: "
                   "T* = d (2 d_k + d_v) / (2 d_k) = 1024",
        "code": '''
d, d_k, d_v = 512, 64, 128
answer = d * (2 * d_k + d_v) / (2 * d_k)
''',
    },
    {
        "exercise": "03.7",
        "mistake": "reuses the chapter's equal-width crossover T* = 3d/2 = 768, ignoring the "
                   "unequal widths d_k = 64 and d_v = 128",
        "code": '''
d = 512
answer = 3 * d / 2
''',
    },
    {
        "exercise": "03.7",
        "mistake": "leaves out the mixing term T^2 d_v and equates only the scores T^2 d_k with "
                   "the projections: T* = d (2 d_k + d_v) / d_k = 2048",
        "code": '''
d, d_k, d_v = 512, 64, 128
answer = d * (2 * d_k + d_v) / d_k
''',
    },
]
