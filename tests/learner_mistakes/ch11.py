"""Learner mistakes for chapter 11's exercises, written without reading the checkers."""

MISTAKES = [
    # ------------------------------------------------------------------ 11.1
    {
        "exercise": "11.1",
        "mistake": "counts elements, not bytes: forgets the 2 bytes per 16-bit element before "
                   "converting to MiB",
        "code": '''
T, d, b = 4096, 64, 128
naive = 4 * T * d + 4 * T * T
tiled = 2 * T * d + 2 * T * d * math.ceil(T / b)
answer = {"naive_mib": naive / 2**20, "tiled_mib": tiled / 2**20}
''',
    },
    {
        "exercise": "11.1",
        "mistake": "divides by 10^6 (megabytes) instead of 2^20 (mebibytes)",
        "code": '''
T, d, b, bytes_per = 4096, 64, 128, 2
naive = 4 * T * d + 4 * T * T
tiled = 2 * T * d + 2 * T * d * math.ceil(T / b)
answer = {"naive_mib": naive * bytes_per / 1e6, "tiled_mib": tiled * bytes_per / 1e6}
''',
    },
    {
        "exercise": "11.1",
        "mistake": "misreads the tiled count: multiplies the streamed K and V by the tile size b "
                   "instead of by the number of query tiles ceil(T/b)",
        "code": '''
T, d, b, bytes_per = 4096, 64, 128, 2
naive = 4 * T * d + 4 * T * T
tiled = 2 * T * d + 2 * T * d * b
answer = {"naive_mib": naive * bytes_per / 2**20, "tiled_mib": tiled * bytes_per / 2**20}
''',
    },
    {
        "exercise": "11.1",
        "mistake": "leaves out the 2Td term of the tiled count (reading Q and writing O once), "
                   "keeping only K and V streamed past each query tile",
        "code": '''
T, d, b, bytes_per = 4096, 64, 128, 2
naive = 4 * T * d + 4 * T * T
tiled = 2 * T * d * math.ceil(T / b)
answer = {"naive_mib": naive * bytes_per / 2**20, "tiled_mib": tiled * bytes_per / 2**20}
''',
    },
    {
        "exercise": "11.1",
        "mistake": "counts the T x T matrix once (T^2) instead of four times (write S, read S, "
                   "write P, read P) in the naive traffic",
        "code": '''
T, d, b, bytes_per = 4096, 64, 128, 2
naive = 4 * T * d + T * T
tiled = 2 * T * d + 2 * T * d * math.ceil(T / b)
answer = {"naive_mib": naive * bytes_per / 2**20, "tiled_mib": tiled * bytes_per / 2**20}
''',
    },
    # ------------------------------------------------------------------ 11.2
    {
        "exercise": "11.2",
        "mistake": "gives every query w keys (T * w), forgetting that the first w - 1 queries "
                   "have fewer keys before them",
        "code": '''
T, w = 10_000, 512
pairs = T * w
answer = {"pairs": pairs, "fraction": pairs / T**2}
''',
    },
    {
        "exercise": "11.2",
        "mistake": "off by one in the triangle: sums 0 + 1 + ... + (w - 1) for the first w "
                   "queries (w(w-1)/2) although query i sees i + 1 keys, itself included",
        "code": '''
T, w = 10_000, 512
pairs = w * (w - 1) // 2 + (T - w) * w
answer = {"pairs": pairs, "fraction": pairs / T**2}
''',
    },
    {
        "exercise": "11.2",
        "mistake": "counts a symmetric window (w - 1 keys on each side of the query) instead of "
                   "the causal window i - w + 1 ... i",
        "code": '''
T, w = 10_000, 512
pairs = sum(min(i, w - 1) + min(T - 1 - i, w - 1) + 1 for i in range(T))
answer = {"pairs": pairs, "fraction": pairs / T**2}
''',
    },
    {
        "exercise": "11.2",
        "mistake": "gives the fraction of the causal pairs T(T+1)/2 instead of all T^2 pairs",
        "code": '''
T, w = 10_000, 512
pairs = w * (w + 1) // 2 + (T - w) * w
answer = {"pairs": pairs, "fraction": pairs / (T * (T + 1) // 2)}
''',
    },
    {
        "exercise": "11.2",
        "mistake": "gives the fraction as a percentage (4.99) instead of a fraction (0.0499)",
        "code": '''
T, w = 10_000, 512
pairs = w * (w + 1) // 2 + (T - w) * w
answer = {"pairs": pairs, "fraction": 100 * pairs / T**2}
''',
    },
    # ------------------------------------------------------------------ 11.3
    {
        "exercise": "11.3",
        "mistake": "returns the smaller of the two maxima as m: o/l still comes out right, but the "
                   "state's m is not the union's maximum and the rescale factors exceed 1 "
                   "(overflow when the maxima are far apart)",
        "code": '''
def merge(state_a, state_b):
    m_a, l_a, o_a = state_a
    m_b, l_b, o_b = state_b
    m = torch.minimum(torch.as_tensor(m_a), torch.as_tensor(m_b))
    scale_a, scale_b = torch.exp(m_a - m), torch.exp(m_b - m)
    return m, scale_a * l_a + scale_b * l_b, scale_a * o_a + scale_b * o_b


answer = merge
''',
    },
    {
        "exercise": "11.3",
        "mistake": "assumes part a holds the larger maximum: keeps m_a and rescales only b by "
                   "exp(m_b - m_a), which is wrong (and overflows) when m_b > m_a",
        "code": '''
def merge(state_a, state_b):
    m_a, l_a, o_a = state_a
    m_b, l_b, o_b = state_b
    scale = torch.exp(m_b - m_a)
    return m_a, l_a + scale * l_b, o_a + scale * o_b


answer = merge
''',
    },
    {
        "exercise": "11.3",
        "mistake": "undoes the max subtraction (multiplies l and o by exp(m_a), exp(m_b)) and "
                   "returns the new maximum with these absolute sums: l is no longer "
                   "sum exp(s - m), and exp(m) overflows for large scores",
        "code": '''
def merge(state_a, state_b):
    m_a, l_a, o_a = state_a
    m_b, l_b, o_b = state_b
    m = torch.maximum(torch.as_tensor(m_a), torch.as_tensor(m_b))
    l = torch.exp(m_a) * l_a + torch.exp(m_b) * l_b
    o = torch.exp(m_a) * o_a + torch.exp(m_b) * o_b
    return m, l, o


answer = merge
''',
    },
    {
        "exercise": "11.3",
        "mistake": "rescales the input states in place (l_a, o_a ... are overwritten with "
                   "mul_), so the caller's states are corrupted after the merge",
        "code": '''
def merge(state_a, state_b):
    m_a, l_a, o_a = state_a
    m_b, l_b, o_b = state_b
    m = torch.maximum(torch.as_tensor(m_a), torch.as_tensor(m_b))
    scale_a, scale_b = torch.exp(m_a - m), torch.exp(m_b - m)
    l_a.mul_(scale_a)
    o_a.mul_(scale_a)
    l_b.mul_(scale_b)
    o_b.mul_(scale_b)
    return m, l_a.add_(l_b), o_a.add_(o_b)


answer = merge
''',
    },
    # ------------------------------------------------------------------ 11.4
    {
        "exercise": "11.4",
        "mistake": "no running maximum: accumulates exp(scores) directly, exact on small random "
                   "scores but inf/nan once the scores are large",
        "code": '''
def tiled(queries, keys, values, tile_size):
    normaliser = torch.zeros(queries.shape[0], 1, dtype=queries.dtype)
    output = torch.zeros(queries.shape[0], values.shape[1], dtype=queries.dtype)
    for start in range(0, keys.shape[0], tile_size):
        scores = queries @ keys[start:start + tile_size].T / math.sqrt(queries.shape[1])
        weights = torch.exp(scores)
        normaliser = normaliser + weights.sum(dim=1, keepdim=True)
        output = output + weights @ values[start:start + tile_size]
    return output / normaliser


answer = tiled
''',
    },
    {
        "exercise": "11.4",
        "mistake": "keeps one running maximum shared by all queries (scores.max() over the whole "
                   "tile) instead of one per query: a query whose scores are far below another's "
                   "underflows to 0/0",
        "code": '''
def tiled(queries, keys, values, tile_size):
    running_max = torch.tensor(float("-inf"), dtype=queries.dtype)
    normaliser = torch.zeros(queries.shape[0], 1, dtype=queries.dtype)
    output = torch.zeros(queries.shape[0], values.shape[1], dtype=queries.dtype)
    for start in range(0, keys.shape[0], tile_size):
        scores = queries @ keys[start:start + tile_size].T / math.sqrt(queries.shape[1])
        new_max = torch.maximum(running_max, scores.max())
        rescale = torch.exp(running_max - new_max)
        weights = torch.exp(scores - new_max)
        normaliser = normaliser * rescale + weights.sum(dim=1, keepdim=True)
        output = output * rescale + weights @ values[start:start + tile_size]
        running_max = new_max
    return output / normaliser


answer = tiled
''',
    },
    {
        "exercise": "11.4",
        "mistake": "forms the full T_q x T_k score matrix up front and only slices it into tiles "
                   "afterwards, which the exercise forbids (memory is still quadratic)",
        "code": '''
def tiled(queries, keys, values, tile_size):
    all_scores = queries @ keys.T / math.sqrt(queries.shape[1])  # (T_q, T_k)
    running_max = torch.full((queries.shape[0], 1), float("-inf"), dtype=queries.dtype)
    normaliser = torch.zeros(queries.shape[0], 1, dtype=queries.dtype)
    output = torch.zeros(queries.shape[0], values.shape[1], dtype=queries.dtype)
    for start in range(0, keys.shape[0], tile_size):
        scores = all_scores[:, start:start + tile_size]
        new_max = torch.maximum(running_max, scores.max(dim=1, keepdim=True).values)
        rescale = torch.exp(running_max - new_max)
        weights = torch.exp(scores - new_max)
        normaliser = normaliser * rescale + weights.sum(dim=1, keepdim=True)
        output = output * rescale + weights @ values[start:start + tile_size]
        running_max = new_max
    return output / normaliser


answer = tiled
''',
    },
    {
        "exercise": "11.4",
        "mistake": "creates the running state with torch.zeros/torch.full in the default float32, "
                   "so float64 inputs come back as a float32 result with float32 rounding",
        "code": '''
def tiled(queries, keys, values, tile_size):
    running_max = torch.full((queries.shape[0], 1), float("-inf"))
    normaliser = torch.zeros(queries.shape[0], 1)
    output = torch.zeros(queries.shape[0], values.shape[1])
    for start in range(0, keys.shape[0], tile_size):
        scores = (queries @ keys[start:start + tile_size].T / math.sqrt(queries.shape[1])).float()
        new_max = torch.maximum(running_max, scores.max(dim=1, keepdim=True).values)
        rescale = torch.exp(running_max - new_max)
        weights = torch.exp(scores - new_max)
        normaliser = normaliser * rescale + weights.sum(dim=1, keepdim=True)
        output = output * rescale + weights @ values[start:start + tile_size].float()
        running_max = new_max
    return output / normaliser


answer = tiled
''',
    },
    {
        "exercise": "11.4",
        "mistake": "starts the running maximum at 0 instead of -inf: fine while some score is "
                   "near 0, but when all of a query's scores are very negative exp(s - 0) "
                   "underflows and the output is 0/0",
        "code": '''
def tiled(queries, keys, values, tile_size):
    running_max = torch.zeros(queries.shape[0], 1, dtype=queries.dtype)
    normaliser = torch.zeros(queries.shape[0], 1, dtype=queries.dtype)
    output = torch.zeros(queries.shape[0], values.shape[1], dtype=queries.dtype)
    for start in range(0, keys.shape[0], tile_size):
        scores = queries @ keys[start:start + tile_size].T / math.sqrt(queries.shape[1])
        new_max = torch.maximum(running_max, scores.max(dim=1, keepdim=True).values)
        rescale = torch.exp(running_max - new_max)
        weights = torch.exp(scores - new_max)
        normaliser = normaliser * rescale + weights.sum(dim=1, keepdim=True)
        output = output * rescale + weights @ values[start:start + tile_size]
        running_max = new_max
    return output / normaliser


answer = tiled
''',
    },
    # ------------------------------------------------------------------ 11.5
    {
        "exercise": "11.5",
        "mistake": "forgets the padding of the last block: counts T * 2w scores as if T were a "
                   "multiple of w",
        "code": '''
T, w = 10_000, 512
scores = T * 2 * w
allowed = w * (w + 1) // 2 + (T - w) * w
answer = {"scores": scores, "wasted": 1 - allowed / scores}
''',
    },
    {
        "exercise": "11.5",
        "mistake": "gives the fraction of the computed scores that is kept (allowed/scores) "
                   "instead of the fraction thrown away",
        "code": '''
T, w = 10_000, 512
scores = math.ceil(T / w) * w * 2 * w
allowed = w * (w + 1) // 2 + (T - w) * w
answer = {"scores": scores, "wasted": allowed / scores}
''',
    },
    {
        "exercise": "11.5",
        "mistake": "gives the number of wasted scores (scores - allowed) instead of a fraction",
        "code": '''
T, w = 10_000, 512
scores = math.ceil(T / w) * w * 2 * w
allowed = w * (w + 1) // 2 + (T - w) * w
answer = {"scores": scores, "wasted": scores - allowed}
''',
    },
    {
        "exercise": "11.5",
        "mistake": "scores each block only against its own w keys (w^2 per block), forgetting "
                   "the keys of the block before",
        "code": '''
T, w = 10_000, 512
scores = math.ceil(T / w) * w * w
allowed = w * (w + 1) // 2 + (T - w) * w
answer = {"scores": scores, "wasted": 1 - allowed / scores}
''',
    },
    {
        "exercise": "11.5",
        "mistake": "measures the waste against the T^2 pairs of the full matrix instead of "
                   "against the scores the banded version computes",
        "code": '''
T, w = 10_000, 512
scores = math.ceil(T / w) * w * 2 * w
allowed = w * (w + 1) // 2 + (T - w) * w
answer = {"scores": scores, "wasted": (scores - allowed) / T**2}
''',
    },
    # ------------------------------------------------------------------ 11.6
    {
        "exercise": "11.6",
        "mistake": "thinks a window of w reaches w positions back per layer (it reaches w - 1): "
                   "3w >= 511 gives 171, which fails",
        "code": '''
answer = math.ceil(distance / layers)
''',
    },
    {
        "exercise": "11.6",
        "mistake": "ignores the stack of layers: asks one layer's window to cover the whole "
                   "distance (w = 512)",
        "code": '''
answer = distance + 1
''',
    },
    {
        "exercise": "11.6",
        "mistake": "off by one in the layers: counts only L - 1 = 2 hops (as if the first layer "
                   "did not widen the reach), giving 257",
        "code": '''
answer = math.ceil(distance / (layers - 1)) + 1
''',
    },
    {
        "exercise": "11.6",
        "mistake": "does not round up: gives the real number 511/3 + 1 = 171.33 instead of the "
                   "smallest integer window",
        "code": '''
answer = distance / layers + 1
''',
    },
]
