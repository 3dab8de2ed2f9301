"""Learner mistakes for chapter 01's exercises, written without reading the checkers."""

MISTAKES = [
    # ----------------------------------------------------------------- 01.1
    {
        "exercise": "01.1",
        "mistake": "counts the token table only once, as for GPT-2's tied model: the untied "
                   "unembedding W_U (another d x n_vocab matrix) is left out",
        "code": '''
n_vocab, d = 32_000, 4_096
answer = n_vocab * d
''',
    },
    {
        "exercise": "01.1",
        "mistake": "adds a learned position table of context x d = 4,096 x 4,096, although the "
                   "model uses rotary positions and has no position table",
        "code": '''
n_vocab, d, context = 32_000, 4_096, 4_096
answer = 2 * n_vocab * d + context * d
''',
    },
    {
        "exercise": "01.1",
        "mistake": "gives a bias of n_vocab entries to the unembedding, although the statement "
                   "says W_U has no bias",
        "code": '''
n_vocab, d = 32_000, 4_096
answer = n_vocab * d + (d * n_vocab + n_vocab)
''',
    },
    {
        "exercise": "01.1",
        "mistake": "answers the unchecked follow-up instead of the count: the memory in bytes of "
                   "the two tables in float16 (2 bytes per parameter), not the number of parameters",
        "code": '''
n_vocab, d = 32_000, 4_096
answer = 2 * n_vocab * d * 2  # bytes in float16
''',
    },
    {
        "exercise": "01.1",
        "mistake": "right number but the wrong type: a float written in scientific notation "
                   "(2.62144e8) where an integer count is asked for",
        "code": '''
answer = 2 * 32e3 * 4.096e3
''',
    },
    # ----------------------------------------------------------------- 01.2
    {
        "exercise": "01.2",
        "mistake": "does not count again after the first merge: takes the two most frequent pairs "
                   "of the first count (ug 20, pu 17), but once 'ug' is merged 'pug' no longer "
                   "contains 'pu' and 'un' (16) wins",
        "code": '''
answer = ["ug", "pu"]
''',
    },
    {
        "exercise": "01.2",
        "mistake": "leaves the word 'hugs' (5 times) out of the count, so 'ug' gets 15 instead of "
                   "20 and 'pu' (17) is merged first",
        "code": '''
answer = ["pu", "pun"]
''',
    },
    {
        "exercise": "01.2",
        "mistake": "after merging 'ug', counts 'un' only in 'pun' (12) and forgets 'bun' (4), so "
                   "h+ug (15) looks more frequent than 'un' (16)",
        "code": '''
answer = ["ug", "hug"]
''',
    },
    {
        "exercise": "01.2",
        "mistake": "gives the merged pairs as tuples of symbols instead of the new tokens (the "
                   "strings 'ug' and 'un')",
        "code": '''
answer = [("u", "g"), ("u", "n")]
''',
    },
    # ----------------------------------------------------------------- 01.3
    {
        "exercise": "01.3",
        "mistake": "uses the maximum context 1,024 instead of the actual length T = 1,000 (as if "
                   "every input were padded to the context length)",
        "code": '''
answer = {"ids": (4, 1024), "X": (4, 1024, 768), "logits": (4, 1024, 50257)}
''',
    },
    {
        "exercise": "01.3",
        "mistake": "forgets the batch axis B = 4: gives the shapes of a single input",
        "code": '''
answer = {"ids": (1000,), "X": (1000, 768), "logits": (1000, 50257)}
''',
    },
    {
        "exercise": "01.3",
        "mistake": "gives logits only for the last position (as used for generating the next "
                   "token), although the statement asks for a score at every position",
        "code": '''
answer = {"ids": (4, 1000), "X": (4, 1000, 768), "logits": (4, 50257)}
''',
    },
    {
        "exercise": "01.3",
        "mistake": "puts the vocabulary axis before the positions in the logits, (B, n_vocab, T), "
                   "the layout cross_entropy wants, instead of the model's (B, T, n_vocab)",
        "code": '''
answer = {"ids": (4, 1000), "X": (4, 1000, 768), "logits": (4, 50257, 1000)}
''',
    },
    # ----------------------------------------------------------------- 01.4
    {
        "exercise": "01.4",
        "mistake": "takes the vocabulary size from the ids (ids.max() + 1) instead of from the "
                   "table: works when the largest id happens to occur, fails (shape mismatch) "
                   "for ids that do not reach n_vocab - 1",
        "code": '''
def embed(ids, table):
    n_vocab = int(ids.max()) + 1
    one_hot = (ids[..., None] == torch.arange(n_vocab)).to(table.dtype)
    return one_hot @ table
''',
    },
    {
        "exercise": "01.4",
        "mistake": "hard-codes a batch axis (ids[:, :, None]), so it works on the (B, T) batch of "
                   "the notebook but fails on a single input of shape (T,)",
        "code": '''
def embed(ids, table):
    n_vocab = table.shape[0]
    one_hot = (ids[:, :, None] == torch.arange(n_vocab)).to(table.dtype)
    return one_hot @ table
''',
    },
    {
        "exercise": "01.4",
        "mistake": "uses nn.functional.one_hot, the shortcut the statement forbids, instead of "
                   "building H by comparing the ids with torch.arange(n_vocab)",
        "code": '''
def embed(ids, table):
    one_hot = nn.functional.one_hot(ids, num_classes=table.shape[0]).to(table.dtype)
    return one_hot @ table
''',
    },
    {
        "exercise": "01.4",
        "mistake": "compares the ids with torch.arange(1, n_vocab + 1), as if ids started at 1: "
                   "every token gets the row of the previous id and id 0 gets a row of zeros",
        "code": '''
def embed(ids, table):
    n_vocab = table.shape[0]
    one_hot = (ids[..., None] == torch.arange(1, n_vocab + 1)).to(table.dtype)
    return one_hot @ table
''',
    },
    # ----------------------------------------------------------------- 01.5
    {
        "exercise": "01.5",
        "mistake": "applies the inverse renumbering: table[permutation] puts row permutation[t] "
                   "at t, whereas row t must move to position permutation[t]",
        "code": '''
answer = table[permutation]
''',
    },
    {
        "exercise": "01.5",
        "mistake": "gives the embedded input for the ids [0, 5, 5, 2] (a 4 x 2 tensor) instead of "
                   "the renamed 6 x 2 table",
        "code": '''
old_ids = torch.tensor([0, 5, 5, 2])
answer = table[old_ids]
''',
    },
    {
        "exercise": "01.5",
        "mistake": "off-by-one loop, range(len(permutation) - 1): the last old row is never moved "
                   "and its new position stays zero",
        "code": '''
answer = torch.zeros_like(table)
for t in range(len(permutation) - 1):
    answer[permutation[t]] = table[t]
''',
    },
    {
        "exercise": "01.5",
        "mistake": "right rows but the wrong type: a nested Python list instead of a tensor",
        "code": '''
rows = [None] * 6
for t, new in enumerate(permutation.tolist()):
    rows[new] = table[t].tolist()
answer = rows
''',
    },
    # ----------------------------------------------------------------- 01.6
    {
        "exercise": "01.6",
        "mistake": "off-by-one in the scan (while i < len(ids) - 1): the last symbol is dropped "
                   "whenever it is not part of a merged pair",
        "code": '''
def apply_merges(word, merges):
    ids = list(word)
    for rank, pair in enumerate(merges):
        merged, i = [], 0
        while i < len(ids) - 1:
            if (ids[i], ids[i + 1]) == pair:
                merged.append(256 + rank)
                i += 2
            else:
                merged.append(ids[i])
                i += 1
        ids = merged
    return ids
''',
    },
    {
        "exercise": "01.6",
        "mistake": "numbers merge r as 255 + r instead of 256 + r (off by one: id 255 is the "
                   "byte 0xFF)",
        "code": '''
def apply_merges(word, merges):
    ids = list(word)
    for rank, pair in enumerate(merges):
        merged, i = [], 0
        while i < len(ids):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
                merged.append(255 + rank)
                i += 2
            else:
                merged.append(ids[i])
                i += 1
        ids = merged
    return ids
''',
    },
    {
        "exercise": "01.6",
        "mistake": "merges only the first occurrence of each pair in the word, not every "
                   "occurrence",
        "code": '''
def apply_merges(word, merges):
    ids = list(word)
    for rank, pair in enumerate(merges):
        for i in range(len(ids) - 1):
            if (ids[i], ids[i + 1]) == pair:
                ids = ids[:i] + [256 + rank] + ids[i + 2:]
                break
    return ids
''',
    },
    {
        "exercise": "01.6",
        "mistake": "a single greedy left-to-right scan that merges any known pair where it meets "
                   "it, ignoring the order in which the merges were learned (and never merging "
                   "a merged token again)",
        "code": '''
def apply_merges(word, merges):
    rank_of = {pair: rank for rank, pair in enumerate(merges)}
    ids, out, i = list(word), [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) in rank_of:
            out.append(256 + rank_of[(ids[i], ids[i + 1])])
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out
''',
    },
    {
        "exercise": "01.6",
        "mistake": "ignores the merges argument and uses the notebook's global tokenizer.merges: "
                   "correct only for that one tokenizer",
        "code": '''
def apply_merges(word, merges):
    ids = list(word)
    for rank, pair in enumerate(tokenizer.merges):
        merged, i = [], 0
        while i < len(ids):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
                merged.append(256 + rank)
                i += 2
            else:
                merged.append(ids[i])
                i += 1
        ids = merged
    return ids
''',
    },
    # ----------------------------------------------------------------- 01.7
    {
        "exercise": "01.7",
        "mistake": "assigns instead of accumulating (answer[ids] = upstream): token 4, which "
                   "occurs twice, keeps only the last position's gradient instead of the sum",
        "code": '''
answer = torch.zeros(6, 3)
answer[ids] = upstream
''',
    },
    {
        "exercise": "01.7",
        "mistake": "averages the gradients of the repeated token instead of summing them "
                   "(row 4 = (2, -0.5, 1.5) instead of (4, -1, 3))",
        "code": '''
answer = torch.zeros(6, 3)
counts = torch.zeros(6)
answer.index_add_(0, ids, upstream)
counts.index_add_(0, ids, torch.ones(4))
answer = answer / counts.clamp(min=1)[:, None]
''',
    },
    {
        "exercise": "01.7",
        "mistake": "transposes the product: computes G^T H, a 3 x 6 matrix, instead of "
                   "H^T G (6 x 3, one row per token)",
        "code": '''
H = (ids[:, None] == torch.arange(6)).float()
answer = upstream.T @ H
''',
    },
    {
        "exercise": "01.7",
        "mistake": "confuses positions with token ids: puts the gradient of position p in row p "
                   "of the table, instead of in row ids[p]",
        "code": '''
answer = torch.zeros(6, 3)
answer[:4] = upstream
''',
    },
]
