"""Learner mistakes for chapter 10's exercises, written without reading the checkers."""

MISTAKES = [
    # ------------------------------------------------------------------ 10.1
    {
        "exercise": "10.1",
        "mistake": "swaps the pair: gives the targets first and the decoder inputs second",
        "code": '''
inputs = ["<start>"] + target_tokens
targets = target_tokens + ["<end>"]
answer = (targets, inputs)
''',
    },
    {
        "exercise": "10.1",
        "mistake": "never uses the end token: the inputs drop the last word and the targets are "
                   "the plain target tokens, so the model is never taught to stop",
        "code": '''
inputs = ["<start>"] + target_tokens[:-1]
targets = target_tokens
answer = (inputs, targets)
''',
    },
    {
        "exercise": "10.1",
        "mistake": "no shift between inputs and targets: the target at each position is the "
                   "token the decoder already reads there (copying, not next-token prediction)",
        "code": '''
inputs = ["<start>"] + target_tokens + ["<end>"]
targets = ["<start>"] + target_tokens + ["<end>"]
answer = (inputs, targets)
''',
    },
    {
        "exercise": "10.1",
        "mistake": "feeds the source sentence (the English side) to the decoder as its input "
                   "instead of the shifted target sentence",
        "code": '''
source_tokens = ["a", "small", "dog"]
inputs = ["<start>"] + source_tokens
targets = target_tokens + ["<end>"]
answer = (inputs, targets)
''',
    },
    {
        "exercise": "10.1",
        "mistake": "right tokens but gives two space-joined strings instead of two lists of tokens",
        "code": '''
answer = ("<start> ein kleiner hund", "ein kleiner hund <end>")
''',
    },
    # ------------------------------------------------------------------ 10.2
    {
        "exercise": "10.2",
        "mistake": "spreads epsilon over the 3 wrong tokens only (0.9 on the correct token, "
                   "0.1/3 on the others) instead of over all 4 tokens as PyTorch does",
        "code": '''
eps = 0.1
q = [1 - eps] + [eps / 3] * 3
p = [0.7, 0.1, 0.1, 0.1]
answer = -sum(qi * math.log(pi) for qi, pi in zip(q, p))
''',
    },
    {
        "exercise": "10.2",
        "mistake": "puts 1 - epsilon on the correct token but forgets that the correct token "
                   "also gets its share epsilon/4 of the spread (the target sums to 0.975)",
        "code": '''
eps, n_vocab = 0.1, 4
q = [1 - eps] + [eps / n_vocab] * 3
p = [0.7, 0.1, 0.1, 0.1]
answer = -sum(qi * math.log(pi) for qi, pi in zip(q, p))
''',
    },
    {
        "exercise": "10.2",
        "mistake": "passes the probabilities to F.cross_entropy as if they were logits (no .log()), "
                   "so PyTorch applies a softmax to (0.7, 0.1, 0.1, 0.1) again",
        "code": '''
answer = F.cross_entropy(
    torch.tensor([[0.7, 0.1, 0.1, 0.1]]), torch.tensor([0]), label_smoothing=0.1
).item()
''',
    },
    {
        "exercise": "10.2",
        "mistake": "computes the smoothed loss in bits (log base 2) instead of nats",
        "code": '''
eps, n_vocab = 0.1, 4
q = [1 - eps + eps / n_vocab] + [eps / n_vocab] * 3
p = [0.7, 0.1, 0.1, 0.1]
answer = -sum(qi * math.log2(pi) for qi, pi in zip(q, p))
''',
    },
    {
        "exercise": "10.2",
        "mistake": "gives the plain cross-entropy -ln 0.7 of the correct token, leaving the "
                   "smoothing term out",
        "code": '''
answer = -math.log(0.7)
''',
    },
    # ------------------------------------------------------------------ 10.3
    {
        "exercise": "10.3",
        "mistake": "thinks the rate decays like 1/s after the peak, so puts a quarter of the "
                   "peak at 4w instead of 16w",
        "code": '''
peak = (d * warmup) ** -0.5
answer = {"peak": peak, "quarter_step": 4 * warmup}
''',
    },
    {
        "exercise": "10.3",
        "mistake": "gives the step on the warm-up side (w/4) where the rate passes a quarter of "
                   "the peak, which the statement explicitly does not ask for",
        "code": '''
peak = (d * warmup) ** -0.5
answer = {"peak": peak, "quarter_step": warmup // 4}
''',
    },
    {
        "exercise": "10.3",
        "mistake": "uses the base model's d = 512 and w = 4000 from the chapter instead of the "
                   "smaller model's d = 256, w = 2000",
        "code": '''
peak = (512 * 4000) ** -0.5
answer = {"peak": peak, "quarter_step": 16 * 4000}
''',
    },
    {
        "exercise": "10.3",
        "mistake": "takes the warm-up branch without its factor s: peak = d^-1/2 * w^-3/2 "
                   "instead of evaluating s * w^-3/2 at s = w",
        "code": '''
peak = d ** -0.5 * warmup ** -1.5
answer = {"peak": peak, "quarter_step": 16 * warmup}
''',
    },
    {
        "exercise": "10.3",
        "mistake": "counts the 16w steps from the end of the warm-up, giving 17w = 34000 instead "
                   "of the step number s = 16w = 32000",
        "code": '''
peak = (d * warmup) ** -0.5
answer = {"peak": peak, "quarter_step": warmup + 16 * warmup}
''',
    },
    # ------------------------------------------------------------------ 10.4
    {
        "exercise": "10.4",
        "mistake": "takes the softmax over the whole vocabulary and then zeroes the discarded "
                   "tokens without renormalising, so the kept probabilities do not sum to 1",
        "code": '''
def top_k_probabilities(logits, k, temperature):
    probs = torch.softmax(logits / temperature, dim=-1)
    kept = torch.topk(logits, k).indices
    out = torch.zeros_like(probs)
    out[kept] = probs[kept]
    return out


answer = top_k_probabilities
''',
    },
    {
        "exercise": "10.4",
        "mistake": "multiplies the logits by the temperature instead of dividing by it "
                   "(a low temperature flattens instead of sharpening)",
        "code": '''
def top_k_probabilities(logits, k, temperature):
    kept = torch.topk(logits, k).indices
    scaled = torch.full_like(logits, float("-inf"))
    scaled[kept] = logits[kept] * temperature
    return torch.softmax(scaled, dim=-1)


answer = top_k_probabilities
''',
    },
    {
        "exercise": "10.4",
        "mistake": "uses argsort, which sorts ascending, and keeps the first k: these are the k "
                   "smallest logits, not the k largest",
        "code": '''
def top_k_probabilities(logits, k, temperature):
    kept = torch.argsort(logits)[:k]
    scaled = torch.full_like(logits, float("-inf"))
    scaled[kept] = logits[kept] / temperature
    return torch.softmax(scaled, dim=-1)


answer = top_k_probabilities
''',
    },
    {
        "exercise": "10.4",
        "mistake": "off by one: thresholds at the (k+1)-th largest logit with >=, so k + 1 "
                   "tokens are kept",
        "code": '''
def top_k_probabilities(logits, k, temperature):
    threshold = torch.sort(logits, descending=True).values[min(k, len(logits) - 1)]
    scaled = torch.where(logits >= threshold, logits / temperature,
                         torch.tensor(float("-inf")))
    return torch.softmax(scaled, dim=-1)


answer = top_k_probabilities
''',
    },
    {
        "exercise": "10.4",
        "mistake": "masks the discarded logits with 0 instead of -inf before the softmax, so the "
                   "discarded tokens keep a non-zero probability",
        "code": '''
def top_k_probabilities(logits, k, temperature):
    kept = torch.topk(logits, k).indices
    scaled = torch.zeros_like(logits)
    scaled[kept] = logits[kept] / temperature
    return torch.softmax(scaled, dim=-1)


answer = top_k_probabilities
''',
    },
    {
        "exercise": "10.4",
        "mistake": "returns only the k kept probabilities (shape (k,)) instead of a vector over "
                   "the full vocabulary with zeros for the discarded tokens",
        "code": '''
def top_k_probabilities(logits, k, temperature):
    values = torch.topk(logits, k).values
    return torch.softmax(values / temperature, dim=-1)


answer = top_k_probabilities
''',
    },
    # ------------------------------------------------------------------ 10.5
    {
        "exercise": "10.5",
        "mistake": "counts only the keys (or only the values): forgets the factor 2 for K and V",
        "code": '''
answer = 24 * 1024 * 1024 * 4 * 2
''',
    },
    {
        "exercise": "10.5",
        "mistake": "ignores the batch of 4 sequences and gives the cache of one sequence",
        "code": '''
answer = 2 * 24 * 1024 * 1024 * 2
''',
    },
    {
        "exercise": "10.5",
        "mistake": "multiplies by the 16 heads as well as by the full width d = 1024, counting "
                   "every number 16 times (d already is h * d_k)",
        "code": '''
n_heads = 16
answer = 2 * 24 * n_heads * 1024 * 1024 * 4 * 2
''',
    },
    {
        "exercise": "10.5",
        "mistake": "gives the size in MiB (384) instead of the number of bytes asked for",
        "code": '''
answer = 2 * 24 * 1024 * 1024 * 4 * 2 // 2**20
''',
    },
    {
        "exercise": "10.5",
        "mistake": "uses 4 bytes per number (float32) although the cache is stored in float16",
        "code": '''
answer = 2 * 24 * 1024 * 1024 * 4 * 4
''',
    },
    # ------------------------------------------------------------------ 10.6
    {
        "exercise": "10.6",
        "mistake": "forgets to divide the scores by sqrt(d_k)",
        "code": '''
def cached_step(query, new_key, new_value, cached_keys, cached_values):
    keys = torch.cat([cached_keys, new_key[None]], dim=0)
    values = torch.cat([cached_values, new_value[None]], dim=0)
    weights = torch.softmax(keys @ query, dim=0)
    return weights @ values, keys, values


answer = cached_step
''',
    },
    {
        "exercise": "10.6",
        "mistake": "lets the query attend to the old cache only (computes the scores before "
                   "appending), so the new position never attends to itself",
        "code": '''
def cached_step(query, new_key, new_value, cached_keys, cached_values):
    weights = torch.softmax(cached_keys @ query / math.sqrt(query.shape[-1]), dim=0)
    output = weights @ cached_values
    keys = torch.cat([cached_keys, new_key[None]], dim=0)
    values = torch.cat([cached_values, new_value[None]], dim=0)
    return output, keys, values


answer = cached_step
''',
    },
    {
        "exercise": "10.6",
        "mistake": "makes the scores a (1, t+1) row and takes the softmax over dim=0, the axis of "
                   "size 1: every weight is 1 and the output is the sum of the values",
        "code": '''
def cached_step(query, new_key, new_value, cached_keys, cached_values):
    keys = torch.cat([cached_keys, new_key[None]], dim=0)
    values = torch.cat([cached_values, new_value[None]], dim=0)
    scores = query[None] @ keys.T / math.sqrt(query.shape[-1])  # (1, t + 1)
    weights = torch.softmax(scores, dim=0)
    return (weights @ values)[0], keys, values


answer = cached_step
''',
    },
    {
        "exercise": "10.6",
        "mistake": "copy-paste slip: appends the new key (instead of the new value) to the value "
                   "cache",
        "code": '''
def cached_step(query, new_key, new_value, cached_keys, cached_values):
    keys = torch.cat([cached_keys, new_key[None]], dim=0)
    values = torch.cat([cached_values, new_key[None]], dim=0)
    weights = torch.softmax(keys @ query / math.sqrt(query.shape[-1]), dim=0)
    return weights @ values, keys, values


answer = cached_step
''',
    },
    {
        "exercise": "10.6",
        "mistake": "scales by the square root of the number of cached positions (keys.shape[0], "
                   "t + 1) instead of sqrt(d_k)",
        "code": '''
def cached_step(query, new_key, new_value, cached_keys, cached_values):
    keys = torch.cat([cached_keys, new_key[None]], dim=0)
    values = torch.cat([cached_values, new_value[None]], dim=0)
    weights = torch.softmax(keys @ query / math.sqrt(keys.shape[0]), dim=0)
    return weights @ values, keys, values


answer = cached_step
''',
    },
    {
        "exercise": "10.6",
        "mistake": "writes the softmax by hand as exp(s) / sum(exp(s)) without subtracting the "
                   "maximum: right on small scores, inf/nan when the scores are large",
        "code": '''
def cached_step(query, new_key, new_value, cached_keys, cached_values):
    keys = torch.cat([cached_keys, new_key[None]], dim=0)
    values = torch.cat([cached_values, new_value[None]], dim=0)
    e = torch.exp(keys @ query / math.sqrt(query.shape[-1]))
    weights = e / e.sum()
    return weights @ values, keys, values


answer = cached_step
''',
    },
    # ------------------------------------------------------------------ 10.7
    {
        "exercise": "10.7",
        "mistake": "no clipping: counts every candidate n-gram that occurs in some reference, "
                   "however often it repeats (the the the the scores 4 of 4)",
        "code": '''
def modified_precision(candidate, references, n):
    def grams(tokens):
        return [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]

    cand = grams(candidate)
    seen = set()
    for reference in references:
        seen.update(grams(reference))
    clipped = sum(1 for gram in cand if gram in seen)
    return clipped, len(cand)


answer = modified_precision
''',
    },
    {
        "exercise": "10.7",
        "mistake": "clips against the counts summed over all references (Counter addition) "
                   "instead of the maximum over the references",
        "code": '''
def modified_precision(candidate, references, n):
    def grams(tokens):
        return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))

    counts = grams(candidate)
    allowed = Counter()
    for reference in references:
        allowed += grams(reference)
    clipped = sum(min(count, allowed[gram]) for gram, count in counts.items())
    return clipped, sum(counts.values())


answer = modified_precision
''',
    },
    {
        "exercise": "10.7",
        "mistake": "clips against each reference separately and keeps the best reference's "
                   "total, instead of taking the maximum per n-gram (right on the example, wrong "
                   "when different n-grams are most frequent in different references)",
        "code": '''
def modified_precision(candidate, references, n):
    def grams(tokens):
        return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))

    counts = grams(candidate)
    best = 0
    for reference in references:
        ref = grams(reference)
        best = max(best, sum(min(c, ref[g]) for g, c in counts.items()))
    return best, sum(counts.values())


answer = modified_precision
''',
    },
    {
        "exercise": "10.7",
        "mistake": "off by one in the n-gram window: range(len(tokens) - n) drops the last "
                   "n-gram of every sentence",
        "code": '''
def modified_precision(candidate, references, n):
    def grams(tokens):
        return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n))

    counts = grams(candidate)
    most = Counter()
    for reference in references:
        for gram, count in grams(reference).items():
            most[gram] = max(most[gram], count)
    clipped = sum(min(count, most[gram]) for gram, count in counts.items())
    return clipped, sum(counts.values())


answer = modified_precision
''',
    },
    {
        "exercise": "10.7",
        "mistake": "collects the n-grams in sets, so each distinct n-gram is counted once: "
                   "the total is the number of distinct n-grams and repeats never count",
        "code": '''
def modified_precision(candidate, references, n):
    def grams(tokens):
        return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}

    cand = grams(candidate)
    in_refs = set()
    for reference in references:
        in_refs |= grams(reference)
    return len(cand & in_refs), len(cand)


answer = modified_precision
''',
    },
    # ------------------------------------------------------------------ 10.8
    {
        "exercise": "10.8",
        "mistake": "gives the entropy in bits (log base 2) instead of nats",
        "code": '''
# Prediction: above 1, a higher temperature flattens the distribution.
def top_probability(tau):
    return torch.softmax(logits / tau, -1)[0].item()


low, high = 1.0, 10.0
for _ in range(60):
    middle = (low + high) / 2
    if top_probability(middle) > 0.5:
        low = middle
    else:
        high = middle
tau = (low + high) / 2
p = torch.softmax(logits / tau, -1)
entropy = -(p * torch.log2(p)).sum().item()
answer = {"tau": tau, "entropy": entropy}
''',
    },
    {
        "exercise": "10.8",
        "mistake": "stops the bisection after 5 halvings of [1, 10]: tau is only known to about "
                   "0.3, far from four significant digits",
        "code": '''
# Prediction: above 1.
def top_probability(tau):
    return torch.softmax(logits / tau, -1)[0].item()


low, high = 1.0, 10.0
for _ in range(5):
    middle = (low + high) / 2
    if top_probability(middle) > 0.5:
        low = middle
    else:
        high = middle
tau = (low + high) / 2
p = torch.softmax(logits / tau, -1)
answer = {"tau": tau, "entropy": -(p * p.log()).sum().item()}
''',
    },
    {
        "exercise": "10.8",
        "mistake": "multiplies the logits by tau instead of dividing, so finds the temperature "
                   "below 1 (about 1/tau) and the guess 'below 1' seems confirmed",
        "code": '''
# Prediction: below 1.
def top_probability(tau):
    return torch.softmax(logits * tau, -1)[0].item()


low, high = 0.01, 1.0  # top probability rises with this tau
for _ in range(60):
    middle = (low + high) / 2
    if top_probability(middle) < 0.5:
        low = middle
    else:
        high = middle
tau = (low + high) / 2
p = torch.softmax(logits * tau, -1)
answer = {"tau": tau, "entropy": -(p * p.log()).sum().item()}
''',
    },
    {
        "exercise": "10.8",
        "mistake": "confuses the entropy with the surprisal of the top token: gives -ln(1/2) = "
                   "ln 2 instead of the entropy of the whole distribution",
        "code": '''
# Prediction: above 1.
def top_probability(tau):
    return torch.softmax(logits / tau, -1)[0].item()


low, high = 1.0, 10.0
for _ in range(60):
    middle = (low + high) / 2
    if top_probability(middle) > 0.5:
        low = middle
    else:
        high = middle
tau = (low + high) / 2
answer = {"tau": tau, "entropy": -math.log(top_probability(tau))}
''',
    },
    {
        "exercise": "10.8",
        "mistake": "finds the right temperature but computes the entropy of softmax(z) at "
                   "tau = 1 instead of at that temperature",
        "code": '''
# Prediction: above 1.
def top_probability(tau):
    return torch.softmax(logits / tau, -1)[0].item()


low, high = 1.0, 10.0
for _ in range(60):
    middle = (low + high) / 2
    if top_probability(middle) > 0.5:
        low = middle
    else:
        high = middle
tau = (low + high) / 2
p = torch.softmax(logits, -1)
answer = {"tau": tau, "entropy": -(p * p.log()).sum().item()}
''',
    },
    # ------------------------------------------------------------------ 10.9
    {
        "exercise": "10.9",
        "mistake": "predicts 'never' for both lengths, reasoning that a wider beam searches a "
                   "superset of greedy's prefixes; but after step 2 width 2 may keep two "
                   "continuations of the runner-up first token and drop greedy's prefix",
        "code": '''
# A beam of 2 always contains greedy's choice, so it can only do better.
prediction = {2: "never", 3: "never"}
lower, higher = [], []
for n_new in (2, 3):
    gap = torch.stack([
        beam_search(model, p, n_new, beam_width=2)[1][0]
        - beam_search(model, p, n_new, beam_width=1)[1][0]
        for p in prompts
    ])
    lower.append(int((gap < -1e-6).sum()))
    higher.append(int((gap > 1e-6).sum()))
answer = {"lower": tuple(lower), "higher": tuple(higher)}
''',
    },
    {
        "exercise": "10.9",
        "mistake": "predicts 'sometimes' for both lengths: misses that with 2 new tokens width 2 "
                   "still holds greedy's first token at the last step, where it takes the best "
                   "second token of every prefix it kept",
        "code": '''
# Beam search is a heuristic: it can lose to greedy at any length.
prediction = {2: "sometimes", 3: "sometimes"}
lower, higher = [], []
for n_new in (2, 3):
    gap = torch.stack([
        beam_search(model, p, n_new, beam_width=2)[1][0]
        - beam_search(model, p, n_new, beam_width=1)[1][0]
        for p in prompts
    ])
    lower.append(int((gap < -1e-6).sum()))
    higher.append(int((gap > 1e-6).sum()))
answer = {"lower": tuple(lower), "higher": tuple(higher)}
''',
    },
    {
        "exercise": "10.9",
        "mistake": "takes width 2's last hypothesis (index -1, its runner-up) instead of the "
                   "first, forgetting that beam_search returns its hypotheses best first",
        "code": '''
# 2 tokens: width 2 keeps greedy's first token and picks the best second
# token of each kept prefix. 3 tokens: greedy's prefix can be dropped.
prediction = {2: "never", 3: "sometimes"}
lower, higher = [], []
for n_new in (2, 3):
    gap = torch.stack([
        beam_search(model, p, n_new, beam_width=2)[1][-1]
        - beam_search(model, p, n_new, beam_width=1)[1][0]
        for p in prompts
    ])
    lower.append(int((gap < -1e-6).sum()))
    higher.append(int((gap > 1e-6).sum()))
answer = {"lower": tuple(lower), "higher": tuple(higher)}
''',
    },
    {
        "exercise": "10.9",
        "mistake": "compares the scores exactly (gap < 0, gap > 0) without the 1e-6 margin, so "
                   "prompts where both widths find the same text but score it in different last "
                   "digits are counted as lower or higher",
        "code": '''
# 2 tokens: width 2 keeps greedy's first token and picks the best second
# token of each kept prefix. 3 tokens: greedy's prefix can be dropped.
prediction = {2: "never", 3: "sometimes"}
lower, higher = [], []
for n_new in (2, 3):
    gap = torch.stack([
        beam_search(model, p, n_new, beam_width=2)[1][0]
        - beam_search(model, p, n_new, beam_width=1)[1][0]
        for p in prompts
    ])
    lower.append(int((gap < 0).sum()))
    higher.append(int((gap > 0).sum()))
answer = {"lower": tuple(lower), "higher": tuple(higher)}
''',
    },
    {
        "exercise": "10.9",
        "mistake": "subtracts the other way round (greedy minus width 2), so the counts of "
                   "'lower' and 'higher' come out swapped",
        "code": '''
# 2 tokens: width 2 keeps greedy's first token and picks the best second
# token of each kept prefix. 3 tokens: greedy's prefix can be dropped.
prediction = {2: "never", 3: "sometimes"}
lower, higher = [], []
for n_new in (2, 3):
    gap = torch.stack([
        beam_search(model, p, n_new, beam_width=1)[1][0]
        - beam_search(model, p, n_new, beam_width=2)[1][0]
        for p in prompts
    ])
    lower.append(int((gap < -1e-6).sum()))
    higher.append(int((gap > 1e-6).sum()))
answer = {"lower": tuple(lower), "higher": tuple(higher)}
''',
    },
    # ----------------------------------------------------------------- 10.10
    {
        "exercise": "10.10",
        "mistake": "predicts 'earlier' from the idea of exposure bias, which only acts after a "
                   "first mistake: up to it the free-running decoder reads the correct prefix",
        "code": '''
# Free-running feeds its own outputs, so errors come sooner.
prediction = "earlier"
with torch.no_grad():
    forced = sorter(*test.inputs).argmax(-1)
free = greedy_decode(sorter, test.source, 9, bos_id=BOS, eos_id=EOS)
wrong = {"forced": forced != test.target_out, "free": free != test.target_out}
first = [torch.where(w.any(1), w.long().argmax(1), 9) for w in wrong.values()]
answer = {mode: w.float().mean(0) for mode, w in wrong.items()}
answer["same_first"] = int((first[0] == first[1]).sum())
''',
    },
    {
        "exercise": "10.10",
        "mistake": "finds the first mistake with argmax on every row, without the rows that "
                   "have none: a string with no mistake gets position 0, as if it had failed on "
                   "its first digit",
        "code": '''
# Up to its first mistake the free-running prefix is the correct prefix.
prediction = "same"
with torch.no_grad():
    forced = sorter(*test.inputs).argmax(-1)
free = greedy_decode(sorter, test.source, 9, bos_id=BOS, eos_id=EOS)
wrong = {"forced": forced != test.target_out, "free": free != test.target_out}
first = [w.long().argmax(1) for w in wrong.values()]
answer = {mode: w.float().mean(0) for mode, w in wrong.items()}
answer["same_first"] = int((first[0] == first[1]).sum())
''',
    },
    {
        "exercise": "10.10",
        "mistake": "averages the errors over the wrong axis (mean(1), over positions): gives one "
                   "rate per string, 300 values, instead of one per position",
        "code": '''
# Up to its first mistake the free-running prefix is the correct prefix.
prediction = "same"
with torch.no_grad():
    forced = sorter(*test.inputs).argmax(-1)
free = greedy_decode(sorter, test.source, 9, bos_id=BOS, eos_id=EOS)
wrong = {"forced": forced != test.target_out, "free": free != test.target_out}
first = [torch.where(w.any(1), w.long().argmax(1), 9) for w in wrong.values()]
answer = {mode: w.float().mean(1) for mode, w in wrong.items()}
answer["same_first"] = int((first[0] == first[1]).sum())
''',
    },
    {
        "exercise": "10.10",
        "mistake": "scores both modes against test.target_in (BOS + sorted digits, the decoder's "
                   "input) instead of test.target_out: every prediction is compared with the "
                   "token one position earlier",
        "code": '''
# Up to its first mistake the free-running prefix is the correct prefix.
prediction = "same"
with torch.no_grad():
    forced = sorter(*test.inputs).argmax(-1)
free = greedy_decode(sorter, test.source, 9, bos_id=BOS, eos_id=EOS)
wrong = {"forced": forced != test.target_in, "free": free != test.target_in}
first = [torch.where(w.any(1), w.long().argmax(1), 9) for w in wrong.values()]
answer = {mode: w.float().mean(0) for mode, w in wrong.items()}
answer["same_first"] = int((first[0] == first[1]).sum())
''',
    },
    {
        "exercise": "10.10",
        "mistake": "gives the accuracy at each position (share of correct tokens) instead of "
                   "the error rate asked for",
        "code": '''
# Up to its first mistake the free-running prefix is the correct prefix.
prediction = "same"
with torch.no_grad():
    forced = sorter(*test.inputs).argmax(-1)
free = greedy_decode(sorter, test.source, 9, bos_id=BOS, eos_id=EOS)
right = {"forced": forced == test.target_out, "free": free == test.target_out}
wrong = {mode: ~r for mode, r in right.items()}
first = [torch.where(w.any(1), w.long().argmax(1), 9) for w in wrong.values()]
answer = {mode: r.float().mean(0) for mode, r in right.items()}
answer["same_first"] = int((first[0] == first[1]).sum())
''',
    },
    {
        "exercise": "10.10",
        "mistake": "gives same_first as the fraction of strings (a float between 0 and 1) "
                   "instead of their count",
        "code": '''
# Up to its first mistake the free-running prefix is the correct prefix.
prediction = "same"
with torch.no_grad():
    forced = sorter(*test.inputs).argmax(-1)
free = greedy_decode(sorter, test.source, 9, bos_id=BOS, eos_id=EOS)
wrong = {"forced": forced != test.target_out, "free": free != test.target_out}
first = [torch.where(w.any(1), w.long().argmax(1), 9) for w in wrong.values()]
answer = {mode: w.float().mean(0) for mode, w in wrong.items()}
answer["same_first"] = float((first[0] == first[1]).float().mean())
''',
    },
]
