"""Learner mistakes for chapter 06's exercises, written without reading the checkers."""

MISTAKES = [
    # ---------------------------------------------------------------- 06.1
    {
        "exercise": "06.1",
        "mistake": "drops the factor 2 in the exponent: uses ω_i = 10000^(-i/d), so the second "
                   "pair turns at 10000^(-1/4) = 0.1 instead of 10000^(-2/4) = 0.01",
        "code": '''
omega_1 = 10000 ** (-1 / 4)
answer = [math.sin(2), math.cos(2), math.sin(2 * omega_1), math.cos(2 * omega_1)]
''',
    },
    {
        "exercise": "06.1",
        "mistake": "uses the tensor2tensor layout (all sines, then all cosines) instead of the "
                   "chapter's interleaved (sin, cos) pairs",
        "code": '''
answer = [math.sin(2), math.sin(0.02), math.cos(2), math.cos(0.02)]
''',
    },
    {
        "exercise": "06.1",
        "mistake": "swaps sine and cosine within each pair: even coordinates are sines, odd ones "
                   "cosines",
        "code": '''
answer = [math.cos(2), math.sin(2), math.cos(0.02), math.sin(0.02)]
''',
    },
    {
        "exercise": "06.1",
        "mistake": "counts positions from 1 (takes 'position 2' to be the second token, p = 1) "
                   "instead of using p = 2",
        "code": '''
p = 1
answer = [math.sin(p), math.cos(p), math.sin(p * 0.01), math.cos(p * 0.01)]
''',
    },
    {
        "exercise": "06.1",
        "mistake": "multiplies the position by 10000^(2i/d) instead of dividing by it: the "
                   "second pair's angle is 2 × 100 = 200 rad instead of 2 / 100 = 0.02",
        "code": '''
p, d = 2, 4
answer = []
for i in range(d // 2):
    angle = p * 10000 ** (2 * i / d)
    answer += [math.sin(angle), math.cos(angle)]
''',
    },
    # ---------------------------------------------------------------- 06.2
    {
        "exercise": "06.2",
        "mistake": "ignores the change of layout and builds the chapter's block-diagonal matrix "
                   "(2×2 blocks on coordinates 2i, 2i+1); in the sines-first layout a rotation "
                   "couples coordinates i and i + d/2",
        "code": '''
def shift_matrix(k, d):
    M = torch.zeros(d, d, dtype=torch.float64)
    for i in range(d // 2):
        angle = k * 10000.0 ** (-2 * i / d)
        c, s = math.cos(angle), math.sin(angle)
        M[2 * i, 2 * i], M[2 * i, 2 * i + 1] = c, -s
        M[2 * i + 1, 2 * i], M[2 * i + 1, 2 * i + 1] = s, c
    return M
''',
    },
    {
        "exercise": "06.2",
        "mistake": "uses the column-vector rotation [[C, S], [-S, C]], i.e. the transpose of "
                   "M_k: with row vectors PE'(p) M gives PE'(p - k) instead of PE'(p + k)",
        "code": '''
def shift_matrix(k, d):
    half = d // 2
    omega = 10000.0 ** (-2 * torch.arange(half, dtype=torch.float64) / d)
    C, S = torch.diag(torch.cos(k * omega)), torch.diag(torch.sin(k * omega))
    return torch.cat((torch.cat((C, S), 1), torch.cat((-S, C), 1)), 0)
''',
    },
    {
        "exercise": "06.2",
        "mistake": "drops the factor 2 in the frequencies (ω_i = 10000^(-i/d)), so every pair "
                   "but the first is rotated by the wrong angle",
        "code": '''
def shift_matrix(k, d):
    half = d // 2
    omega = 10000.0 ** (-torch.arange(half, dtype=torch.float64) / d)
    C, S = torch.diag(torch.cos(k * omega)), torch.diag(torch.sin(k * omega))
    return torch.cat((torch.cat((C, -S), 1), torch.cat((S, C), 1)), 0)
''',
    },
    {
        "exercise": "06.2",
        "mistake": "off-by-one in the pair index: takes the frequencies for i = 1 … d/2 instead "
                   "of i = 0 … d/2 - 1, so no pair turns at frequency 1",
        "code": '''
def shift_matrix(k, d):
    half = d // 2
    i = torch.arange(1, half + 1, dtype=torch.float64)
    omega = 10000.0 ** (-2 * i / d)
    C, S = torch.diag(torch.cos(k * omega)), torch.diag(torch.sin(k * omega))
    return torch.cat((torch.cat((C, -S), 1), torch.cat((S, C), 1)), 0)
''',
    },
    # ---------------------------------------------------------------- 06.3
    {
        "exercise": "06.3",
        "mistake": "gets the sign of b wrong (b = q2 k1 - q1 k2), which gives the score of the "
                   "opposite offset -δ",
        "code": '''
def score_from_offset(query, key, delta, theta):
    a = float(query @ key)
    b = float(query[1] * key[0] - query[0] * key[1])
    return a * math.cos(delta * theta) + b * math.sin(delta * theta)
''',
    },
    {
        "exercise": "06.3",
        "mistake": "forgets θ: uses the angle δ instead of δθ",
        "code": '''
def score_from_offset(query, key, delta, theta):
    a = float(query @ key)
    b = float(query[0] * key[1] - query[1] * key[0])
    return a * math.cos(delta) + b * math.sin(delta)
''',
    },
    {
        "exercise": "06.3",
        "mistake": "keeps only a = q·k and drops the b sin δθ term (true only when q and k are "
                   "parallel, e.g. q = k)",
        "code": '''
def score_from_offset(query, key, delta, theta):
    return float(query @ key) * math.cos(delta * theta)
''',
    },
    {
        "exercise": "06.3",
        "mistake": "attaches a to the sine and b to the cosine (a sin δθ + b cos δθ)",
        "code": '''
def score_from_offset(query, key, delta, theta):
    a = float(query @ key)
    b = float(query[0] * key[1] - query[1] * key[0])
    return a * math.sin(delta * theta) + b * math.cos(delta * theta)
''',
    },
    # ---------------------------------------------------------------- 06.4
    {
        "exercise": "06.4",
        "mistake": "gives every layer its own T5 bias table (× 24); the published T5 shares "
                   "one table across the layers",
        "code": '''
L, d, h, n_ctx, n_buckets = 24, 1024, 16, 2048, 32
answer = (n_ctx * d, L * n_buckets * h, 0, 0)
''',
    },
    {
        "exercise": "06.4",
        "mistake": "counts ALiBi's fixed slopes (one per head) as parameters; they are not "
                   "learned, so ALiBi costs 0",
        "code": '''
d, h, n_ctx, n_buckets = 1024, 16, 2048, 32
answer = (n_ctx * d, n_buckets * h, h, 0)
''',
    },
    {
        "exercise": "06.4",
        "mistake": "gives T5 one scalar per bucket and forgets that each head has its own "
                   "(32 instead of 32 × 16)",
        "code": '''
d, h, n_ctx, n_buckets = 1024, 16, 2048, 32
answer = (n_ctx * d, n_buckets, 0, 0)
''',
    },
    {
        "exercise": "06.4",
        "mistake": "right counts, wrong type: gives floats where integer parameter counts are "
                   "asked for",
        "code": '''
d, h, n_ctx, n_buckets = 1024, 16, 2048, 32
answer = (float(n_ctx * d), float(n_buckets * h), 0.0, 0.0)
''',
    },
    # ---------------------------------------------------------------- 06.5
    {
        "exercise": "06.5",
        "mistake": "rotates only the queries with RoPE, not the keys, so the score depends on "
                   "the absolute position and the RoPE difference is not zero",
        "code": '''
def rope_scores(pos):
    q = positions.apply_rope(x @ W_Q, pos)
    k = x @ W_K
    return q @ k.T


def added_scores(rows):
    z = x + rows
    return (z @ W_Q) @ (z @ W_K).T


table = positions.sinusoidal_positions(105, 8).double()
start, moved = torch.arange(5), torch.arange(100, 105)
answer = (
    float((rope_scores(moved) - rope_scores(start)).abs().max()),
    float((added_scores(table[100:]) - added_scores(table[:5])).abs().max()),
)
''',
    },
    {
        "exercise": "06.5",
        "mistake": "applies RoPE to the token vectors x before the projections instead of to q "
                   "and k; W_Q and W_K then break the relative-position property",
        "code": '''
def rope_scores(pos):
    z = positions.apply_rope(x, pos)
    return (z @ W_Q) @ (z @ W_K).T


def added_scores(rows):
    z = x + rows
    return (z @ W_Q) @ (z @ W_K).T


table = positions.sinusoidal_positions(105, 8).double()
start, moved = torch.arange(5), torch.arange(100, 105)
answer = (
    float((rope_scores(moved) - rope_scores(start)).abs().max()),
    float((added_scores(table[100:]) - added_scores(table[:5])).abs().max()),
)
''',
    },
    {
        "exercise": "06.5",
        "mistake": "adds the sinusoidal rows to q and k after projecting instead of to x before "
                   "projecting, as the statement asks",
        "code": '''
def rope_scores(pos):
    q = positions.apply_rope(x @ W_Q, pos)
    k = positions.apply_rope(x @ W_K, pos)
    return q @ k.T


def added_scores(rows):
    return (x @ W_Q + rows) @ (x @ W_K + rows).T


table = positions.sinusoidal_positions(105, 8).double()
start, moved = torch.arange(5), torch.arange(100, 105)
answer = (
    float((rope_scores(moved) - rope_scores(start)).abs().max()),
    float((added_scores(table[100:]) - added_scores(table[:5])).abs().max()),
)
''',
    },
    {
        "exercise": "06.5",
        "mistake": "reports the mean absolute difference of the score matrices instead of the "
                   "largest absolute difference",
        "code": '''
def rope_scores(pos):
    q = positions.apply_rope(x @ W_Q, pos)
    k = positions.apply_rope(x @ W_K, pos)
    return q @ k.T


def added_scores(rows):
    z = x + rows
    return (z @ W_Q) @ (z @ W_K).T


table = positions.sinusoidal_positions(105, 8).double()
start, moved = torch.arange(5), torch.arange(100, 105)
answer = (
    float((rope_scores(moved) - rope_scores(start)).abs().mean()),
    float((added_scores(table[100:]) - added_scores(table[:5])).abs().mean()),
)
''',
    },
    # ---------------------------------------------------------------- 06.6
    {
        "exercise": "06.6",
        "mistake": "off-by-one: gives the largest index i = 45 instead of the number of pairs "
                   "i = 0 … 45, which is 46",
        "code": '''
answer = math.floor(64 * math.log(4096 / (2 * math.pi)) / math.log(10000))
''',
    },
    {
        "exercise": "06.6",
        "mistake": "drops the 2 in θ_i = 10000^(-2i/d_k) when solving (uses 10000^(-i/128)): "
                   "gets i ≤ 90 and 91 pairs, more than the 64 pairs there are",
        "code": '''
largest = math.floor(128 * math.log(4096 / (2 * math.pi)) / math.log(10000))
answer = largest + 1
''',
    },
    {
        "exercise": "06.6",
        "mistake": "uses L θ_i ≥ 1 (one radian) instead of L θ_i ≥ 2π for a full turn",
        "code": '''
largest = math.floor(64 * math.log(4096) / math.log(10000))
answer = largest + 1
''',
    },
    {
        "exercise": "06.6",
        "mistake": "counts the pairs that do not complete a turn (64 - 46 = 18) instead of "
                   "those that do",
        "code": '''
turns = 4096 * positions.rope_frequencies(128) >= 2 * math.pi
answer = int((~turns).sum())
''',
    },
    {
        "exercise": "06.6",
        "mistake": "gives the real-valued bound on i (≈45.03) instead of an integer count of "
                   "pairs",
        "code": '''
answer = 64 * math.log(4096 / (2 * math.pi)) / math.log(10000)
''',
    },
    # ---------------------------------------------------------------- 06.7
    {
        "exercise": "06.7",
        "mistake": "uses the interleaved layout of cos and sin (repeat_interleave) for the "
                   "'halves' convention too; there pair i is (x_i, x_{i+d/2}), so cos and sin "
                   "must be repeated as [θ_0 … θ_{d/2-1}, θ_0 … θ_{d/2-1}]",
        "code": '''
def apply_rope(x, positions, convention="interleaved"):
    T, d = x.shape
    i = torch.arange(d // 2, dtype=torch.float64)
    theta = 10000.0 ** (-2 * i / d)
    angles = positions.to(torch.float64)[:, None] * theta
    cos = angles.cos().repeat_interleave(2, dim=-1)
    sin = angles.sin().repeat_interleave(2, dim=-1)
    if convention == "interleaved":
        rot = torch.stack((-x[:, 1::2], x[:, 0::2]), dim=-1).reshape(T, d)
    else:
        rot = torch.cat((-x[:, d // 2:], x[:, : d // 2]), dim=-1)
    return x * cos + rot * sin


answer = apply_rope
''',
    },
    {
        "exercise": "06.7",
        "mistake": "gets the quarter turn backwards, rot(a, b) = (b, -a) instead of (-b, a), so "
                   "every pair rotates by -pθ",
        "code": '''
def apply_rope(x, positions, convention="interleaved"):
    T, d = x.shape
    i = torch.arange(d // 2, dtype=torch.float64)
    theta = 10000.0 ** (-2 * i / d)
    angles = positions.to(torch.float64)[:, None] * theta
    if convention == "interleaved":
        cos = angles.cos().repeat_interleave(2, dim=-1)
        sin = angles.sin().repeat_interleave(2, dim=-1)
        rot = torch.stack((x[:, 1::2], -x[:, 0::2]), dim=-1).reshape(T, d)
    else:
        cos, sin = angles.cos().repeat(1, 2), angles.sin().repeat(1, 2)
        rot = torch.cat((x[:, d // 2:], -x[:, : d // 2]), dim=-1)
    return x * cos + rot * sin


answer = apply_rope
''',
    },
    {
        "exercise": "06.7",
        "mistake": "drops the factor 2 in the frequencies, θ_i = 10000^(-i/d) instead of "
                   "10000^(-2i/d)",
        "code": '''
def apply_rope(x, positions, convention="interleaved"):
    T, d = x.shape
    i = torch.arange(d // 2, dtype=torch.float64)
    theta = 10000.0 ** (-i / d)
    angles = positions.to(torch.float64)[:, None] * theta
    if convention == "interleaved":
        cos = angles.cos().repeat_interleave(2, dim=-1)
        sin = angles.sin().repeat_interleave(2, dim=-1)
        rot = torch.stack((-x[:, 1::2], x[:, 0::2]), dim=-1).reshape(T, d)
    else:
        cos, sin = angles.cos().repeat(1, 2), angles.sin().repeat(1, 2)
        rot = torch.cat((-x[:, d // 2:], x[:, : d // 2]), dim=-1)
    return x * cos + rot * sin


answer = apply_rope
''',
    },
    {
        "exercise": "06.7",
        "mistake": "ignores the convention argument: always pairs (x_2i, x_2i+1), so 'halves' "
                   "returns the interleaved result",
        "code": '''
def apply_rope(x, positions, convention="interleaved"):
    T, d = x.shape
    i = torch.arange(d // 2, dtype=torch.float64)
    theta = 10000.0 ** (-2 * i / d)
    angles = positions.to(torch.float64)[:, None] * theta
    cos = angles.cos().repeat_interleave(2, dim=-1)
    sin = angles.sin().repeat_interleave(2, dim=-1)
    rot = torch.stack((-x[:, 1::2], x[:, 0::2]), dim=-1).reshape(T, d)
    return x * cos + rot * sin


answer = apply_rope
''',
    },
    {
        "exercise": "06.7",
        "mistake": "ignores the positions argument and rotates row t by t θ_i (assumes positions "
                   "0 … T-1): right only when positions is arange(T)",
        "code": '''
def apply_rope(x, positions, convention="interleaved"):
    T, d = x.shape
    i = torch.arange(d // 2, dtype=torch.float64)
    theta = 10000.0 ** (-2 * i / d)
    angles = torch.arange(T, dtype=torch.float64)[:, None] * theta
    if convention == "interleaved":
        cos = angles.cos().repeat_interleave(2, dim=-1)
        sin = angles.sin().repeat_interleave(2, dim=-1)
        rot = torch.stack((-x[:, 1::2], x[:, 0::2]), dim=-1).reshape(T, d)
    else:
        cos, sin = angles.cos().repeat(1, 2), angles.sin().repeat(1, 2)
        rot = torch.cat((-x[:, d // 2:], x[:, : d // 2]), dim=-1)
    return x * cos + rot * sin


answer = apply_rope
''',
    },
]
