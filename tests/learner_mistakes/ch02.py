"""Learner mistakes for chapter 02's exercises, written without reading the checkers."""

MISTAKES = [
    # ----------------------------------------------------------------- 02.1
    {
        "exercise": "02.1",
        "mistake": "forgets the scale: takes the softmax of the raw scores (0, 2, 4) instead of "
                   "(0, 2, 4)/sqrt(2)",
        "code": '''
X_moved = X.clone()
X_moved[2] = torch.tensor([1.0, 2.0])
keys, values = X_moved @ W_K, X_moved @ W_V
scores = torch.tensor([0.0, 2.0, 4.0])
weights = torch.exp(scores) / torch.exp(scores).sum()
answer = weights @ values
''',
    },
    {
        "exercise": "02.1",
        "mistake": "moves x3 for the key k3 = (3, 2) but keeps the old value v3 = (1, 1): the "
                   "value must move too, v3 = x3 W_V = (1, 2)",
        "code": '''
x3 = torch.tensor([1.0, 2.0])
k3 = x3 @ W_K
keys = torch.stack([X[0] @ W_K, X[1] @ W_K, k3])
values = X @ W_V  # old values
q2 = torch.tensor([0.0, 2.0])
scores = keys @ q2 / math.sqrt(2)
weights = torch.exp(scores) / torch.exp(scores).sum()
answer = weights @ values
''',
    },
    {
        "exercise": "02.1",
        "mistake": "uses Omega_k (W_K transposed, the columns convention) for the keys, so "
                   "k3 = (1, 3) instead of x3 W_K = (3, 2) and all three scores are wrong",
        "code": '''
X_moved = X.clone()
X_moved[2] = torch.tensor([1.0, 2.0])
keys = X_moved @ W_K.T
values = X_moved @ W_V
q2 = torch.tensor([0.0, 2.0])
scores = keys @ q2 / math.sqrt(2)
weights = torch.exp(scores) / torch.exp(scores).sum()
answer = weights @ values
''',
    },
    {
        "exercise": "02.1",
        "mistake": "computes the whole score matrix and normalises it over the wrong axis "
                   "(softmax over the queries, dim=0), then reads row 2",
        "code": '''
X_moved = X.clone()
X_moved[2] = torch.tensor([1.0, 2.0])
S = (X_moved @ W_Q) @ (X_moved @ W_K).T / math.sqrt(2)
A = torch.softmax(S, dim=0)
answer = A[1] @ (X_moved @ W_V)
''',
    },
    {
        "exercise": "02.1",
        "mistake": "gives query 2's three attention weights instead of its output o2 (a vector "
                   "of two numbers)",
        "code": '''
scores = torch.tensor([0.0, 2.0, 4.0]) / math.sqrt(2)
answer = torch.exp(scores) / torch.exp(scores).sum()
''',
    },
    # ----------------------------------------------------------------- 02.2
    {
        "exercise": "02.2",
        "mistake": "forgets that tank has two equal competitors (pump and valve): solves "
                   "1/(1 + e^{-c/sqrt2}) = 0.9, giving sqrt(2) ln 9 instead of sqrt(2) ln 18",
        "code": '''
answer = math.sqrt(2) * math.log(9)
''',
    },
    {
        "exercise": "02.2",
        "mistake": "inverts the scale when solving c/sqrt(2) = ln 18: divides by sqrt(2) instead "
                   "of multiplying",
        "code": '''
answer = math.log(18) / math.sqrt(2)
''',
    },
    {
        "exercise": "02.2",
        "mistake": "uses the base-10 logarithm (math.log10) where the softmax needs the natural "
                   "logarithm",
        "code": '''
answer = math.sqrt(2) * math.log10(18)
''',
    },
    {
        "exercise": "02.2",
        "mistake": "multiplies only tank's score by c, not all three scores as the statement "
                   "says: solves e^{c*2/sqrt2} / (2 e^{1/sqrt2} + e^{c*2/sqrt2}) = 0.9",
        "code": '''
answer = (math.log(18) + 1 / math.sqrt(2)) / math.sqrt(2)
''',
    },
    {
        "exercise": "02.2",
        "mistake": "rounding slip: rounds c to the integer 4, where the weight on tank is only "
                   "about 0.894, not 0.9 (the exact value is sqrt(2) ln 18 = 4.088)",
        "code": '''
answer = 4.0
''',
    },
    # ----------------------------------------------------------------- 02.3
    {
        "exercise": "02.3",
        "mistake": "keeps the chapter's loss, the second component o_{3,2}: uses g_j = the "
                   "second components (0, 2, 3) of the values instead of the first (1, 0, 3)",
        "code": '''
row_scores = torch.tensor([1.0, 1.0, 2.0]) / math.sqrt(2)
A = torch.exp(row_scores) / torch.exp(row_scores).sum()
g = lookup_values[:, 1]
answer = A * (g - A @ g)
''',
    },
    {
        "exercise": "02.3",
        "mistake": "leaves out g_bar: returns A_j g_j instead of A_j (g_j - g_bar), so the "
                   "gradient no longer sums to zero",
        "code": '''
row_scores = torch.tensor([1.0, 1.0, 2.0]) / math.sqrt(2)
A = torch.exp(row_scores) / torch.exp(row_scores).sum()
g = lookup_values[:, 0]
answer = A * g
''',
    },
    {
        "exercise": "02.3",
        "mistake": "forgets the 1/sqrt(d_k) scale when computing the weights A: uses the softmax "
                   "of (1, 1, 2) instead of (1, 1, 2)/sqrt(2)",
        "code": '''
row_scores = torch.tensor([1.0, 1.0, 2.0])
A = torch.exp(row_scores) / torch.exp(row_scores).sum()
g = lookup_values[:, 0]
answer = A * (g - A @ g)
''',
    },
    {
        "exercise": "02.3",
        "mistake": "takes g_bar as the plain mean of the g_j (4/3) instead of the "
                   "attention-weighted mean sum_k A_k g_k",
        "code": '''
row_scores = torch.tensor([1.0, 1.0, 2.0]) / math.sqrt(2)
A = torch.exp(row_scores) / torch.exp(row_scores).sum()
g = lookup_values[:, 0]
answer = A * (g - g.mean())
''',
    },
    # ----------------------------------------------------------------- 02.4
    {
        "exercise": "02.4",
        "mistake": "no max subtraction before exp: correct for small c but overflows (inf/inf = "
                   "nan) for c = 1000",
        "code": '''
def soft_lookup(query, keys, values, c=1.0):
    scores = c * (keys @ query) / math.sqrt(keys.shape[-1])
    exponentials = torch.exp(scores)
    weights = exponentials / exponentials.sum()
    return weights, weights @ values
''',
    },
    {
        "exercise": "02.4",
        "mistake": "ignores the sharpness argument c: always computes softmax(K q / sqrt(d_k))",
        "code": '''
def soft_lookup(query, keys, values, c=1.0):
    scores = (keys @ query) / math.sqrt(keys.shape[-1])
    exponentials = torch.exp(scores - scores.max())
    weights = exponentials / exponentials.sum()
    return weights, weights @ values
''',
    },
    {
        "exercise": "02.4",
        "mistake": "scales by sqrt of the value width (values.shape[-1]) instead of the key width "
                   "d_k: only right when d_v happens to equal d_k, as in the notebook's example",
        "code": '''
def soft_lookup(query, keys, values, c=1.0):
    scores = c * (keys @ query) / math.sqrt(values.shape[-1])
    exponentials = torch.exp(scores - scores.max())
    weights = exponentials / exponentials.sum()
    return weights, weights @ values
''',
    },
    {
        "exercise": "02.4",
        "mistake": "treats the query as a (1, d_k) matrix and never squeezes it: right numbers "
                   "but weights of shape (1, T) and output (1, d_v) instead of (T,) and (d_v,)",
        "code": '''
def soft_lookup(query, keys, values, c=1.0):
    scores = c * (query[None] @ keys.T) / math.sqrt(keys.shape[-1])  # (1, T)
    exponentials = torch.exp(scores - scores.max())
    weights = exponentials / exponentials.sum()
    return weights, weights @ values
''',
    },
    {
        "exercise": "02.4",
        "mistake": "forgets the 1/sqrt(d_k) in the scores: computes softmax(c K q)",
        "code": '''
def soft_lookup(query, keys, values, c=1.0):
    scores = c * (keys @ query)
    exponentials = torch.exp(scores - scores.max())
    weights = exponentials / exponentials.sum()
    return weights, weights @ values
''',
    },
    # ----------------------------------------------------------------- 02.5
    {
        "exercise": "02.5",
        "mistake": "gives the new weight on key 4, A'_{i4}, instead of the shrink factor "
                   "1 - A'_{i4}",
        "code": '''
X4 = torch.cat([X, torch.tensor([[2.0, 1.0]])])
new = torch.softmax(X4 @ W_Q @ (X4 @ W_K).T / math.sqrt(2), dim=-1)
answer = new[:3, 3]
''',
    },
    {
        "exercise": "02.5",
        "mistake": "divides the wrong way round: old/new = 1/(1 - A'_{i4}) (a growth factor "
                   "above 1) instead of new/old",
        "code": '''
X4 = torch.cat([X, torch.tensor([[2.0, 1.0]])])
old = torch.softmax(X @ W_Q @ (X @ W_K).T / math.sqrt(2), dim=-1)
new = torch.softmax(X4 @ W_Q @ (X4 @ W_K).T / math.sqrt(2), dim=-1)
answer = (old / new[:3, :3])[:, 0]
''',
    },
    {
        "exercise": "02.5",
        "mistake": "reads the ratio matrix along the wrong axis (ratios[0] instead of "
                   "ratios[:, 0]): gives query 1's factor three times",
        "code": '''
X4 = torch.cat([X, torch.tensor([[2.0, 1.0]])])
old = torch.softmax(X @ W_Q @ (X @ W_K).T / math.sqrt(2), dim=-1)
new = torch.softmax(X4 @ W_Q @ (X4 @ W_K).T / math.sqrt(2), dim=-1)
ratios = new[:3, :3] / old
answer = ratios[0]
''',
    },
    {
        "exercise": "02.5",
        "mistake": "includes the new fourth query too: gives four factors 1 - A'_{i4} instead of "
                   "one for each of the first three queries",
        "code": '''
X4 = torch.cat([X, torch.tensor([[2.0, 1.0]])])
new = torch.softmax(X4 @ W_Q @ (X4 @ W_K).T / math.sqrt(2), dim=-1)
answer = 1 - new[:, 3]
''',
    },
    {
        "exercise": "02.5",
        "mistake": "forgets the 1/sqrt(2) scale in both the old and the new weights",
        "code": '''
X4 = torch.cat([X, torch.tensor([[2.0, 1.0]])])
new = torch.softmax(X4 @ W_Q @ (X4 @ W_K).T, dim=-1)
answer = 1 - new[:3, 3]
''',
    },
    # ----------------------------------------------------------------- 02.6
    {
        "exercise": "02.6",
        "mistake": "assumes attention is linear and answers half the original output o1(X)/2",
        "code": '''
weights = torch.softmax((X @ W_Q) @ (X @ W_K).T / math.sqrt(2), dim=-1)
answer = (weights[0] @ (X @ W_V)) / 2
''',
    },
    {
        "exercise": "02.6",
        "mistake": "halves the queries and keys (flatter weights) but forgets that the values are "
                   "halved as well: mixes the original values",
        "code": '''
halved = X / 2
weights = torch.softmax((halved @ W_Q) @ (halved @ W_K).T / math.sqrt(2), dim=-1)
answer = weights[0] @ (X @ W_V)
''',
    },
    {
        "exercise": "02.6",
        "mistake": "thinks halving X halves the scores (factor 1/2) instead of quartering them "
                   "(queries and keys are both halved: factor 1/4)",
        "code": '''
S = (X @ W_Q) @ (X @ W_K).T / math.sqrt(2)
weights = torch.softmax(S / 2, dim=-1)
answer = weights[0] @ ((X / 2) @ W_V)
''',
    },
    {
        "exercise": "02.6",
        "mistake": "off by one in the row index: gives the output of query 2 (weights[1]) instead "
                   "of query 1",
        "code": '''
halved = X / 2
weights = torch.softmax((halved @ W_Q) @ (halved @ W_K).T / math.sqrt(2), dim=-1)
answer = weights[1] @ (halved @ W_V)
''',
    },
    # ----------------------------------------------------------------- 02.7
    {
        "exercise": "02.7",
        "mistake": "builds the system with the values as rows instead of columns (forgets the "
                   "transpose): solves [[1,0,1],[0,2,1],[3,3,1]] a = (1.5, 1.5, 1), which is not "
                   "the coordinate equations",
        "code": '''
system = torch.cat([lookup_values, torch.ones(3, 1)], dim=1)
answer = torch.linalg.solve(system, torch.tensor([1.5, 1.5, 1.0]))
''',
    },
    {
        "exercise": "02.7",
        "mistake": "leaves out the equation a1 + a2 + a3 = 1 and takes the minimum-norm solution "
                   "of the two coordinate equations (pseudo-inverse): the weights do not sum to 1",
        "code": '''
answer = torch.linalg.pinv(lookup_values.T) @ torch.tensor([1.5, 1.5])
''',
    },
    {
        "exercise": "02.7",
        "mistake": "puts the sum equation last in the matrix but first in the right-hand side: "
                   "solves with (1, 1.5, 1.5) instead of (1.5, 1.5, 1)",
        "code": '''
system = torch.cat([lookup_values.T, torch.ones(1, 3)])
answer = torch.linalg.solve(system, torch.tensor([1.0, 1.5, 1.5]))
''',
    },
    {
        "exercise": "02.7",
        "mistake": "answers the follow-up instead of the question: gives scores that reach the "
                   "point (log of the weights) instead of the weights themselves",
        "code": '''
system = torch.cat([lookup_values.T, torch.ones(1, 3)])
weights = torch.linalg.solve(system, torch.tensor([1.5, 1.5, 1.0]))
answer = torch.log(weights)
''',
    },
]
