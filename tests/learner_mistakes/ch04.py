"""Learner mistakes for chapter 04's exercises, written without reading the checkers."""

MISTAKES = [
    # ---------------------------------------------------------------- 04.1
    {
        "exercise": "04.1",
        "mistake": "takes Var(q_i k_i) to be the variance of one factor (2) instead of the "
                   "product of both variances (2 × 2 = 4), so both standard deviations are too "
                   "small by √2",
        "code": '''
d_k = 50
var_term = 2.0  # Var(q_i k_i) = Var(q_i) ... (forgot the k_i factor)
answer = (math.sqrt(d_k * var_term), math.sqrt(d_k * var_term) / math.sqrt(d_k))
''',
    },
    {
        "exercise": "04.1",
        "mistake": "gives the variances (200, 4) instead of the standard deviations: forgets "
                   "the final square root",
        "code": '''
d_k = 50
variance = d_k * 2.0 * 2.0
answer = (variance, variance / d_k)
''',
    },
    {
        "exercise": "04.1",
        "mistake": "in the simulation multiplies standard-normal draws by the variance 2 instead "
                   "of by its square root, so the entries have variance 4 and the stds come out "
                   "as (28.3, 4.0) instead of (14.1, 2.0)",
        "code": '''
d_k = 50
generator = torch.Generator().manual_seed(0)
q = 2.0 * torch.randn(20_000, d_k, generator=generator)
k = 2.0 * torch.randn(20_000, d_k, generator=generator)
scores = (q * k).sum(dim=-1)
answer = (scores.std().item(), (scores / math.sqrt(d_k)).std().item())
''',
    },
    {
        "exercise": "04.1",
        "mistake": "ignores the new variance 2 and answers the chapter's unit-variance case, "
                   "(√d_k, 1) = (7.07, 1.0)",
        "code": '''
d_k = 50
answer = (math.sqrt(d_k), 1.0)
''',
    },
    # ---------------------------------------------------------------- 04.2
    {
        "exercise": "04.2",
        "mistake": "reports the standard deviations (≈16 and ≈1) of the simulated scores "
                   "instead of their variances (≈256 and ≈1)",
        "code": '''
d_k, n_draws = 256, 10_000
generator = torch.Generator().manual_seed(42)
q = torch.randn(n_draws, d_k, generator=generator)
k = torch.randn(n_draws, d_k, generator=generator)
scores = (q * k).sum(dim=-1)
answer = (scores.mean().item(), scores.std().item(), (scores / math.sqrt(d_k)).std().item())
''',
    },
    {
        "exercise": "04.2",
        "mistake": "divides the variance by √d_k instead of dividing the scores by √d_k "
                   "(which divides the variance by d_k): the scaled variance comes out ≈16, not 1",
        "code": '''
d_k, n_draws = 256, 10_000
generator = torch.Generator().manual_seed(42)
q = torch.randn(n_draws, d_k, generator=generator)
k = torch.randn(n_draws, d_k, generator=generator)
scores = (q * k).sum(dim=-1)
variance = scores.var().item()
answer = (scores.mean().item(), variance, variance / math.sqrt(d_k))
''',
    },
    {
        "exercise": "04.2",
        "mistake": "sums the products over the wrong axis (dim=0, the 10,000 draws) instead of "
                   "over the d_k coordinates, so it gets 256 dot products of length 10,000 "
                   "(variance ≈10,000)",
        "code": '''
d_k, n_draws = 256, 10_000
generator = torch.Generator().manual_seed(42)
q = torch.randn(n_draws, d_k, generator=generator)
k = torch.randn(n_draws, d_k, generator=generator)
scores = (q * k).sum(dim=0)
answer = (scores.mean().item(), scores.var().item(), (scores / math.sqrt(d_k)).var().item())
''',
    },
    {
        "exercise": "04.2",
        "mistake": "averages the coordinate products instead of summing them (a dot product is a "
                   "sum), so the 'scores' have variance 1/256 instead of 256",
        "code": '''
d_k, n_draws = 256, 10_000
generator = torch.Generator().manual_seed(42)
q = torch.randn(n_draws, d_k, generator=generator)
k = torch.randn(n_draws, d_k, generator=generator)
scores = (q * k).mean(dim=-1)
answer = (scores.mean().item(), scores.var().item(), (scores / math.sqrt(d_k)).var().item())
''',
    },
    # ---------------------------------------------------------------- 04.3
    {
        "exercise": "04.3",
        "mistake": "keeps only the -a_i a_j term and forgets the diagonal a_i δ_ij, so the "
                   "diagonal holds -a_i² instead of a_i(1 - a_i)",
        "code": '''
def softmax_jacobian_of(a):
    """J (n, n) with J[i, j] = ∂a_i/∂s_j for softmax outputs a (n,)."""
    return -torch.outer(a, a)
''',
    },
    {
        "exercise": "04.3",
        "mistake": "computes only the diagonal a_i(1 - a_i) and leaves the off-diagonal "
                   "entries -a_i a_j at zero (treats the softmax as if it acted elementwise)",
        "code": '''
def softmax_jacobian_of(a):
    """J (n, n) with J[i, j] = ∂a_i/∂s_j for softmax outputs a (n,)."""
    return torch.diag(a * (1 - a))
''',
    },
    {
        "exercise": "04.3",
        "mistake": "misreads the input as scores and applies softmax to it again before using "
                   "the formula: a is already the softmax output",
        "code": '''
def softmax_jacobian_of(a):
    """J (n, n) with J[i, j] = ∂a_i/∂s_j for softmax outputs a (n,)."""
    p = torch.softmax(a, dim=-1)
    return torch.diag(p) - torch.outer(p, p)
''',
    },
    {
        "exercise": "04.3",
        "mistake": "index slip in J_ij = a_i(δ_ij - a_j): uses a_i in place of a_j, so the "
                   "off-diagonal entries are -a_i² (not symmetric) instead of -a_i a_j",
        "code": '''
def softmax_jacobian_of(a):
    """J (n, n) with J[i, j] = ∂a_i/∂s_j for softmax outputs a (n,)."""
    n = a.shape[0]
    return a[:, None] * (torch.eye(n, dtype=a.dtype) - a[:, None])
''',
    },
    # ---------------------------------------------------------------- 04.4
    {
        "exercise": "04.4",
        "mistake": "(a) forgets the division by √2 and takes the softmax of (1, 1, 2) itself",
        "code": '''
a = torch.softmax(torch.tensor([1.0, 1.0, 2.0]), dim=-1)
trace = 1 - (a**2).sum().item()
answer = (trace, 1 - (0.7**2 + 0.3**2))
''',
    },
    {
        "exercise": "04.4",
        "mistake": "(b) spreads the remaining 0.3 evenly (0.1 on each other key), which makes the "
                   "trace largest (0.48), not smallest; the minimum puts all 0.3 on one key (0.42)",
        "code": '''
a = torch.softmax(torch.tensor([1.0, 1.0, 2.0]) / math.sqrt(2), dim=-1)
trace = 1 - (a**2).sum().item()
smallest = 1 - (0.7**2 + 3 * 0.1**2)
answer = (trace, smallest)
''',
    },
    {
        "exercise": "04.4",
        "mistake": "computes Σ a_i² instead of the trace 1 - Σ a_i² in both parts",
        "code": '''
a = torch.softmax(torch.tensor([1.0, 1.0, 2.0]) / math.sqrt(2), dim=-1)
answer = ((a**2).sum().item(), 0.7**2 + 0.3**2)
''',
    },
    {
        "exercise": "04.4",
        "mistake": "(a) sums every entry of the Jacobian instead of its diagonal (the trace); "
                   "the entries of each row of J sum to 0, so it reports 0",
        "code": '''
a = torch.softmax(torch.tensor([1.0, 1.0, 2.0]) / math.sqrt(2), dim=-1)
J = torch.diag(a) - torch.outer(a, a)
answer = (J.sum().item(), 1 - (0.7**2 + 0.3**2))
''',
    },
    # ---------------------------------------------------------------- 04.5
    {
        "exercise": "04.5",
        "mistake": "multiplies the scores by τ instead of dividing by it, so the weights get "
                   "sharper instead of flatter",
        "code": '''
tau = 2.0
dots = torch.tensor([1.0, 4.0, 5.0])
answer = torch.softmax(dots * tau / math.sqrt(2), dim=-1)
''',
    },
    {
        "exercise": "04.5",
        "mistake": "divides by τ only and forgets the usual √d_k: softmax((1, 4, 5)/2)",
        "code": '''
tau = 2.0
dots = torch.tensor([1.0, 4.0, 5.0])
answer = torch.softmax(dots / tau, dim=-1)
''',
    },
    {
        "exercise": "04.5",
        "mistake": "applies the temperature after the softmax (divides the weights by τ), so the "
                   "weights no longer sum to 1",
        "code": '''
tau = 2.0
dots = torch.tensor([1.0, 4.0, 5.0])
answer = torch.softmax(dots / math.sqrt(2), dim=-1) / tau
''',
    },
    {
        "exercise": "04.5",
        "mistake": "answers the follow-up question instead of the one asked: gives the change of "
                   "each weight from τ = 1 to τ = 2 rather than the weights at τ = 2",
        "code": '''
tau = 2.0
dots = torch.tensor([1.0, 4.0, 5.0])
at_tau = torch.softmax(dots / (tau * math.sqrt(2)), dim=-1)
at_one = torch.softmax(dots / math.sqrt(2), dim=-1)
answer = at_tau - at_one
''',
    },
    # ---------------------------------------------------------------- 04.6
    {
        "exercise": "04.6",
        "mistake": "leaves random_attention_weights at its default scale=True, so it measures the "
                   "scaled rows (largest weight ≈0.11 at every d_k), never crosses 0.82, and "
                   "reports the last d_k tried, 1024",
        "code": '''
answer = None
for d_k in [2**k for k in range(11)]:
    answer = d_k
    weights = random_attention_weights(d_k, 64, 2000,
                                       generator=torch.Generator().manual_seed(0))
    if weights.amax(dim=-1).mean().item() > 0.82:
        break
''',
    },
    {
        "exercise": "04.6",
        "mistake": "forgets to pass n_keys=64 and runs the chapter's 16-key experiment (the "
                   "default), which crosses 0.82 already at d_k = 64",
        "code": '''
answer = None
for d_k in [2**k for k in range(11)]:
    weights = random_attention_weights(d_k, n_draws=2000, scale=False,
                                       generator=torch.Generator().manual_seed(d_k))
    if weights.amax(dim=-1).mean().item() > 0.82:
        answer = d_k
        break
''',
    },
    {
        "exercise": "04.6",
        "mistake": "takes the single largest weight over all 2,000 draws (weights.max()) instead "
                   "of the mean over draws of each row's largest weight; some row is sharp "
                   "already at d_k = 1",
        "code": '''
answer = None
for d_k in [2**k for k in range(11)]:
    weights = random_attention_weights(d_k, 64, 2000, scale=False,
                                       generator=torch.Generator().manual_seed(d_k))
    if weights.max().item() > 0.82:
        answer = d_k
        break
''',
    },
    {
        "exercise": "04.6",
        "mistake": "reports the loop's exponent k (7) instead of d_k = 2^k (128)",
        "code": '''
answer = None
for k in range(11):
    weights = random_attention_weights(2**k, 64, 2000, scale=False,
                                       generator=torch.Generator().manual_seed(2**k))
    if weights.amax(dim=-1).mean().item() > 0.82:
        answer = k
        break
''',
    },
]
