"""Learner mistakes for chapter 08's exercises, written without reading the checkers."""

MISTAKES = [
    # ------------------------------------------------------------------ 08.1
    {
        "exercise": "08.1",
        "mistake": "counts the MLP as GPT-2's two matrices (2 d d_ff) although SwiGLU has three "
                   "(gate, up and down)",
        "code": '''
d, d_ff, n_layers = 1024, 2816, 24
answer = n_layers * (4 * d * d + 2 * d * d_ff + 2 * d)
''',
    },
    {
        "exercise": "08.1",
        "mistake": "gives each RMSNorm a gamma and a beta (2d) like a LayerNorm; RMSNorm has only "
                   "a gain gamma (d)",
        "code": '''
d, d_ff, n_layers = 1024, 2816, 24
answer = n_layers * (4 * d * d + 3 * d * d_ff + 2 * 2 * d)
''',
    },
    {
        "exercise": "08.1",
        "mistake": "leaves out the two RMSNorms' parameters entirely",
        "code": '''
d, d_ff, n_layers = 1024, 2816, 24
answer = n_layers * (4 * d * d + 3 * d * d_ff)
''',
    },
    {
        "exercise": "08.1",
        "mistake": "gives the count of one layer and forgets to multiply by the 24 layers",
        "code": '''
d, d_ff = 1024, 2816
answer = 4 * d * d + 3 * d * d_ff + 2 * d
''',
    },
    # ------------------------------------------------------------------ 08.2
    {
        "exercise": "08.2",
        "mistake": "uses the unbiased variance (divides by d - 1 = 3) although the statement says "
                   "to divide by d",
        "code": '''
token = torch.tensor([2.0, 4.0, 4.0, 6.0])
gamma = torch.tensor([1.0, 1.0, 1.0, 0.5])
beta = torch.tensor([0.0, 0.0, 0.5, 0.0])
mean = token.mean()
variance = token.var()  # unbiased by default
answer = gamma * (token - mean) / torch.sqrt(variance) + beta
''',
    },
    {
        "exercise": "08.2",
        "mistake": "divides by the variance instead of by the standard deviation (forgets the "
                   "square root)",
        "code": '''
token = torch.tensor([2.0, 4.0, 4.0, 6.0])
gamma = torch.tensor([1.0, 1.0, 1.0, 0.5])
beta = torch.tensor([0.0, 0.0, 0.5, 0.0])
mean = token.mean()
variance = ((token - mean) ** 2).mean()
answer = gamma * (token - mean) / variance + beta
''',
    },
    {
        "exercise": "08.2",
        "mistake": "scales by gamma but forgets to add beta",
        "code": '''
token = torch.tensor([2.0, 4.0, 4.0, 6.0])
gamma = torch.tensor([1.0, 1.0, 1.0, 0.5])
mean = token.mean()
variance = ((token - mean) ** 2).mean()
answer = gamma * (token - mean) / torch.sqrt(variance)
''',
    },
    {
        "exercise": "08.2",
        "mistake": "stops at the standardised vector and gives it as the output, without applying "
                   "gamma and beta",
        "code": '''
token = torch.tensor([2.0, 4.0, 4.0, 6.0])
mean = token.mean()
variance = ((token - mean) ** 2).mean()
answer = (token - mean) / torch.sqrt(variance)
''',
    },
    # ------------------------------------------------------------------ 08.3
    {
        "exercise": "08.3",
        "mistake": "gives the root mean square sqrt(v / (v + eps)) instead of the mean square "
                   "v / (v + eps)",
        "code": '''
v, eps = 4e-5, 1e-5
answer = math.sqrt(v / (v + eps))
''',
    },
    {
        "exercise": "08.3",
        "mistake": "inverts the ratio: (v + eps) / v, as if eps blew the quiet token up",
        "code": '''
v, eps = 4e-5, 1e-5
answer = (v + eps) / v
''',
    },
    {
        "exercise": "08.3",
        "mistake": "ignores eps (the output of a LayerNorm always has mean square 1)",
        "code": '''
answer = 1.0  # LayerNorm output always has mean square 1
''',
    },
    {
        "exercise": "08.3",
        "mistake": "puts eps outside the square root (divides by sqrt(v) + eps), which gives "
                   "v / (sqrt(v) + eps)^2",
        "code": '''
v, eps = 4e-5, 1e-5
answer = v / (math.sqrt(v) + eps) ** 2
''',
    },
    # ------------------------------------------------------------------ 08.4
    {
        "exercise": "08.4",
        "mistake": "uses torch.var's default unbiased variance (divides by d - 1) instead of the "
                   "biased variance",
        "code": '''
def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    variance = x.var(dim=-1, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(variance + eps) + beta


answer = layer_norm
''',
    },
    {
        "exercise": "08.4",
        "mistake": "takes the statistics over the batch axis (dim 0), like a BatchNorm, instead of "
                   "over each token's features: a sample's output depends on the other samples",
        "code": '''
def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(dim=0, keepdim=True)
    variance = ((x - mean) ** 2).mean(dim=0, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(variance + eps) + beta


answer = layer_norm
''',
    },
    {
        "exercise": "08.4",
        "mistake": "adds eps to the standard deviation instead of to the variance under the square "
                   "root",
        "code": '''
def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return gamma * (x - mean) / (torch.sqrt(variance) + eps) + beta


answer = layer_norm
''',
    },
    {
        "exercise": "08.4",
        "mistake": "hard-codes dim=1 for the statistics: right for a (N, d) matrix, but for three "
                   "or four axes it normalises over the positions instead of the last axis",
        "code": '''
def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(dim=1, keepdim=True)
    variance = ((x - mean) ** 2).mean(dim=1, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(variance + eps) + beta


answer = layer_norm
''',
    },
    {
        "exercise": "08.4",
        "mistake": "ignores the eps argument and always uses 1e-5",
        "code": '''
def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(variance + 1e-5) + beta


answer = layer_norm
''',
    },
    # ------------------------------------------------------------------ 08.5
    {
        "exercise": "08.5",
        "mistake": "ignores `kind`: always builds the pre-norm layer, even for kind='post'",
        "code": '''
def transformer_layer(x, attention, mlp, norm1, norm2, kind):
    x = x + attention(norm1(x))
    return x + mlp(norm2(x))


answer = transformer_layer
''',
    },
    {
        "exercise": "08.5",
        "mistake": "pre-norm: adds the branch to the normalised input (x = LN(x) + f(LN(x))), so "
                   "the residual stream itself gets normalised instead of staying the identity",
        "code": '''
def transformer_layer(x, attention, mlp, norm1, norm2, kind):
    if kind == "pre":
        h = norm1(x)
        x = h + attention(h)
        h = norm2(x)
        return h + mlp(h)
    x = norm1(x + attention(x))
    return norm2(x + mlp(x))


answer = transformer_layer
''',
    },
    {
        "exercise": "08.5",
        "mistake": "post-norm: normalises the branch output before adding it (x + LN(f(x))) "
                   "instead of normalising the sum LN(x + f(x))",
        "code": '''
def transformer_layer(x, attention, mlp, norm1, norm2, kind):
    if kind == "pre":
        x = x + attention(norm1(x))
        return x + mlp(norm2(x))
    x = x + norm1(attention(x))
    return x + norm2(mlp(x))


answer = transformer_layer
''',
    },
    {
        "exercise": "08.5",
        "mistake": "pre-norm: feeds the MLP the layer's input x instead of the stream after the "
                   "attention branch (runs the two branches in parallel)",
        "code": '''
def transformer_layer(x, attention, mlp, norm1, norm2, kind):
    if kind == "pre":
        return x + attention(norm1(x)) + mlp(norm2(x))
    x = norm1(x + attention(x))
    return norm2(x + mlp(x))


answer = transformer_layer
''',
    },
    {
        "exercise": "08.5",
        "mistake": "swaps the two norms: norm2 before the attention and norm1 before the MLP "
                   "(invisible while both LayerNorms are at their initial gamma = 1, beta = 0)",
        "code": '''
def transformer_layer(x, attention, mlp, norm1, norm2, kind):
    if kind == "pre":
        x = x + attention(norm2(x))
        return x + mlp(norm1(x))
    x = norm2(x + attention(x))
    return norm1(x + mlp(x))


answer = transformer_layer
''',
    },
    # ------------------------------------------------------------------ 08.6
    {
        "exercise": "08.6",
        "mistake": "still counts a learned position table (2,048 x 512) although RoPE has no "
                   "position parameters",
        "code": '''
d, n_layers, n_vocab, n_ctx = 512, 8, 32_000, 2048
answer = n_layers * (12 * d**2 + 13 * d) + 2 * n_vocab * d + n_ctx * d + 2 * d
''',
    },
    {
        "exercise": "08.6",
        "mistake": "counts the vocabulary table once, as if the output layer were tied to the "
                   "token embedding",
        "code": '''
d, n_layers, n_vocab = 512, 8, 32_000
answer = n_layers * (12 * d**2 + 13 * d) + n_vocab * d + 2 * d
''',
    },
    {
        "exercise": "08.6",
        "mistake": "forgets the final LayerNorm (2d)",
        "code": '''
d, n_layers, n_vocab = 512, 8, 32_000
answer = n_layers * (12 * d**2 + 13 * d) + 2 * n_vocab * d
''',
    },
    {
        "exercise": "08.6",
        "mistake": "gives the untied output layer a bias of n_vocab entries although it has none",
        "code": '''
d, n_layers, n_vocab = 512, 8, 32_000
answer = n_layers * (12 * d**2 + 13 * d) + 2 * n_vocab * d + n_vocab + 2 * d
''',
    },
    # ------------------------------------------------------------------ 08.7
    {
        "exercise": "08.7",
        "mistake": "leaves out the output layer: because it is tied it has no extra parameters, "
                   "but it still costs n_vocab * d multiply-adds per token",
        "code": '''
d, n_layers, T = 1024, 24, 1024
answer = n_layers * (12 * d**2 + 2 * T * d)
''',
    },
    {
        "exercise": "08.7",
        "mistake": "counts the attention of the last token as T d per layer (the scores only) "
                   "instead of 2 T d (scores and the weighted sum of the values)",
        "code": '''
d, n_layers, n_vocab, T = 1024, 24, 50257, 1024
answer = n_layers * (12 * d**2 + T * d) + n_vocab * d
''',
    },
    {
        "exercise": "08.7",
        "mistake": "counts the attention of the whole sequence (2 T^2 d per layer) instead of the "
                   "last token's 2 T d: per sequence, not per token",
        "code": '''
d, n_layers, n_vocab, T = 1024, 24, 50257, 1024
answer = n_layers * (12 * d**2 + 2 * T * T * d) + n_vocab * d
''',
    },
    {
        "exercise": "08.7",
        "mistake": "counts FLOPs (two per multiply-add) instead of multiply-adds",
        "code": '''
d, n_layers, n_vocab, T = 1024, 24, 50257, 1024
answer = 2 * (n_layers * (12 * d**2 + 2 * T * d) + n_vocab * d)
''',
    },
    {
        "exercise": "08.7",
        "mistake": "rounds the count to 404 million instead of giving the exact integer",
        "code": '''
answer = 404_000_000
''',
    },
    # ------------------------------------------------------------------ 08.8
    {
        "exercise": "08.8",
        "mistake": "thinks any zero-mean vector is returned unchanged: gives a `fixed` vector with "
                   "mean 0 but variance 0.5, not 1",
        "code": '''
answer = {
    "mean": 0.0,
    "variance": 1.0,
    "never_fixed": [1.0, 2.0, 3.0, 4.0],
    "fixed": [1.0, -1.0, 0.0, 0.0],
}
''',
    },
    {
        "exercise": "08.8",
        "mistake": "swaps the two vectors: the mean-0, variance-1 vector is given as never fixed "
                   "and the mean-2.5 vector as fixed",
        "code": '''
answer = {
    "mean": 0.0,
    "variance": 1.0,
    "never_fixed": [1.0, -1.0, 1.0, -1.0],
    "fixed": [1.0, 2.0, 3.0, 4.0],
}
''',
    },
    {
        "exercise": "08.8",
        "mistake": "takes the zero vector as the fixed point of the silent layer, but with "
                   "eps = 0 LN(0) is 0/0, and any LayerNorm output has variance 1",
        "code": '''
answer = {
    "mean": 0.0,
    "variance": 1.0,
    "never_fixed": [1.0, 2.0, 3.0, 4.0],
    "fixed": [0.0, 0.0, 0.0, 0.0],
}
''',
    },
    {
        "exercise": "08.8",
        "mistake": "gives the sum of the squares of a LayerNorm output (d = 4) as its variance "
                   "instead of 1",
        "code": '''
answer = {
    "mean": 0.0,
    "variance": 4.0,
    "never_fixed": [1.0, 2.0, 3.0, 4.0],
    "fixed": [1.0, -1.0, 1.0, -1.0],
}
''',
    },
    {
        "exercise": "08.8",
        "mistake": "builds `fixed` by standardising with torch.std (unbiased, d - 1), so its biased "
                   "variance is 3/4, not 1, and LayerNorm does not return it unchanged",
        "code": '''
z = torch.tensor([1.0, 2.0, 3.0, 4.0])
fixed = (z - z.mean()) / z.std()
answer = {
    "mean": 0.0,
    "variance": 1.0,
    "never_fixed": [1.0, 2.0, 3.0, 4.0],
    "fixed": fixed.tolist(),
}
''',
    },
]
