"""Chapter 9, 10 and 11 checkers: right answers pass, typical mistakes get a hint, nothing crashes.

Right answers are computed here from closed forms or with PyTorch's own functions
(``F.scaled_dot_product_attention``, ``F.cross_entropy``), independently of the checkers.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from tformer.checks import ch09, ch10, ch11

GARBAGE = ["text", [1, 2], {"a": 1}, float("nan"), object()]
ALL = [
    ch09.ex1, ch09.ex2, ch09.ex3, ch09.ex4, ch09.ex5,
    ch10.ex1, ch10.ex2, ch10.ex3, ch10.ex4, ch10.ex5, ch10.ex6, ch10.ex7,
    ch11.ex1, ch11.ex2, ch11.ex3, ch11.ex4, ch11.ex5, ch11.ex6,
]


def _cross(x, memory, W_Q, W_K, W_V, W_O, n_heads):
    batch, s_tgt, d = x.shape

    def split(t):
        return t.view(batch, -1, n_heads, d // n_heads).transpose(1, 2)

    heads = F.scaled_dot_product_attention(split(x @ W_Q), split(memory @ W_K), split(memory @ W_V))
    return heads.transpose(1, 2).reshape(batch, s_tgt, d) @ W_O


def _top_k(logits, k, temperature):
    kept = torch.topk(logits, k).indices
    probabilities = torch.zeros_like(logits)
    probabilities[kept] = torch.softmax(logits[kept] / temperature, 0)
    return probabilities


def _modified_precision(candidate, references, n):
    from collections import Counter

    def grams(tokens):
        return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))

    counts, refs = grams(candidate), [grams(r) for r in references]
    clipped = sum(min(c, max(r[g] for r in refs)) for g, c in counts.items())
    return clipped, sum(counts.values())


def _cached_step(query, key, value, keys, values):
    keys, values = torch.cat([keys, key[None]]), torch.cat([values, value[None]])
    output = F.scaled_dot_product_attention(query[None, None], keys[None], values[None])[0, 0]
    return output, keys, values


def _merge(a, b):
    m = max(float(a[0]), float(b[0]))
    return m, a[1] * math.exp(a[0] - m) + b[1] * math.exp(b[0] - m), (
        a[2] * math.exp(a[0] - m) + b[2] * math.exp(b[0] - m)
    )


def _tiled(queries, keys, values, tile_size):  # no tiling needed to be right
    return F.scaled_dot_product_attention(queries[None], keys[None], values[None])[0]


RIGHT = {
    ch09.ex1: {"tokens": 144, "values": 3072, "cost_ratio": (144 / 196) ** 2},
    ch09.ex2: {"Q": (2, 8, 5, 64), "K": (2, 8, 12, 64), "weights": (2, 8, 5, 12),
               "outputs": (2, 5, 512), "residual": "decoder"},
    ch09.ex3: 6 * (4 * 1024**2 + 4 * 1024 + 2 * 1024 * 4096 + 4096 + 1024 + 4 * 1024)
    + 6 * (8 * 1024**2 + 8 * 1024 + 2 * 1024 * 4096 + 4096 + 1024 + 6 * 1024),
    ch09.ex4: _cross,
    ch09.ex5: lambda logits, targets: F.cross_entropy(
        logits.flatten(0, 1), targets.flatten(), ignore_index=-100
    ),
    ch10.ex1: (["<start>", "ein", "kleiner", "hund"], ["ein", "kleiner", "hund", "<end>"]),
    ch10.ex2: -(0.925 * math.log(0.7) + 0.075 * math.log(0.1)),
    ch10.ex3: {"peak": 1 / math.sqrt(256 * 2000), "quarter_step": 32000},
    ch10.ex4: _top_k,
    ch10.ex5: 2 * 24 * 1024 * 1024 * 4 * 2,
    ch10.ex6: _cached_step,
    ch10.ex7: _modified_precision,
    ch11.ex1: {"naive_mib": 130.0, "tiled_mib": 33.0},
    ch11.ex2: {"pairs": 4_989_184, "fraction": 4_989_184 / 10**8},
    ch11.ex3: _merge,
    ch11.ex4: _tiled,
    ch11.ex5: {"scores": 10_485_760, "wasted": 1 - 4_989_184 / 10_485_760},
    ch11.ex6: 172,
}


@pytest.mark.parametrize("checker", ALL, ids=lambda c: c.exercise_id)
def test_right_answers_pass(checker):
    assert checker(RIGHT[checker]).status == "passed"


@pytest.mark.parametrize("checker", ALL, ids=lambda c: c.exercise_id)
def test_missing_and_garbage_never_crash(checker):
    assert checker(None).status == "not attempted"
    for garbage in GARBAGE:
        assert checker(garbage).status in ("wrong", "not attempted")


@pytest.mark.parametrize(
    ("checker", "answer", "hint"),
    [
        (ch09.ex1, {"tokens": 144, "values": 3072, "cost_ratio": 144 / 196},
         "ratio of token counts"),
        (ch09.ex2, {**RIGHT[ch09.ex2], "residual": "encoder"}, "decoder's own stream"),
        (ch09.ex3, 12 * (4 * 1024**2 + 4 * 1024 + 2 * 1024 * 4096 + 5120 + 4096),
         "decoder layers"),
        (ch10.ex1, (RIGHT[ch10.ex1][1], RIGHT[ch10.ex1][0]), "swapped"),
        (ch10.ex2, -math.log(0.7), "plain cross-entropy"),
        (ch10.ex3, {"peak": 1 / math.sqrt(256 * 2000), "quarter_step": 8000}, "1/√s"),
        (ch10.ex5, 2 * 24 * 1024 * 1024 * 2, "one sequence"),
        (ch11.ex1, {"naive_mib": 65.0, "tiled_mib": 16.5}, "2 bytes"),
        (ch11.ex5, {"scores": 10_240_000, "wasted": 0.5}, "⌈T/w⌉"),
        (ch11.ex6, 171, "one short"),
    ],
)
def test_typical_mistakes_get_a_hint(checker, answer, hint):
    verdict = checker(answer)
    assert verdict.status == "wrong" and hint in verdict.message


def test_function_mistakes_get_a_hint():
    def self_attention_instead(x, memory, W_Q, W_K, W_V, W_O, n_heads):
        return _cross(memory, memory, W_Q, W_K @ torch.eye(W_K.shape[1]), W_V, W_O, n_heads)

    assert ch09.ex4(self_attention_instead).status == "wrong"
    no_temperature = ch10.ex4(lambda logits, k, t: _top_k(logits, k, 1.0))
    assert "temperature" in no_temperature.message

    def unscaled_merge(a, b):
        return max(float(a[0]), float(b[0])), a[1] + b[1], a[2] + b[2]

    assert "rescaling" in ch11.ex3(unscaled_merge).message
    assert ch11.ex4(lambda q, k, v, t: torch.softmax(q @ k.T, 1) @ v).status == "wrong"


TENSOR_GARBAGE = [torch.zeros(2), torch.ones(2, 3), (torch.ones(3), None), [None, None], (None, ["a"])]


@pytest.mark.parametrize("checker", ALL, ids=lambda c: c.exercise_id)
def test_tensors_and_none_inside_answers_give_a_verdict(checker):
    """Regression: ``answer == N`` on a tensor answer (ambiguous truth value) and a ``None``
    inside a pair made checkers report "error" instead of a hint."""
    for garbage in TENSOR_GARBAGE:
        assert checker(garbage).status in ("wrong", "not attempted"), (checker, garbage)
    for key_garbage in ({"tokens": torch.ones(2), "cost_ratio": None},
                        {"peak": torch.ones(2), "quarter_step": torch.ones(2)},
                        {"scores": torch.ones(2), "mib": "256"}):
        assert checker(key_garbage).status in ("wrong", "not attempted")


@pytest.mark.parametrize("checker", [ch09.ex3, ch10.ex2, ch10.ex5, ch11.ex6],
                         ids=lambda c: c.exercise_id)
def test_a_number_given_as_a_one_element_tensor_passes(checker):
    # a count (an int) as an integer tensor, any other number as a float64 tensor
    dtype = torch.int64 if isinstance(RIGHT[checker], int) else torch.float64
    assert checker(torch.tensor(RIGHT[checker], dtype=dtype)).status == "passed"


# ---------------------------------------------------------------------------------------------
# Chapter 10's predict-then-run exercises: the measured part is graded against a recomputation
# from the reader's own model and data; the prediction is compared with the run, never graded.


def _temperature_answer():
    logits = torch.tensor([3.0, 2.0, 0.5, 0.0, -1.0, -2.0], dtype=torch.float64)
    # the top probability is 1/2 where Σ_i exp((z_i - z_0) / τ) = 2: solve by bisection
    low, high = 1.0, 10.0
    for _ in range(100):
        tau = (low + high) / 2
        low, high = (tau, high) if torch.exp((logits - 3) / tau).sum() < 2 else (low, tau)
    p = torch.softmax(logits / tau, -1)
    return {"tau": tau, "entropy": float(-(p * p.log()).sum())}


def test_temperature_prediction_is_compared_with_the_run(capsys):
    answer = _temperature_answer()
    assert ch10.ex8(answer, "above").status == "passed"
    assert 'prediction "above": right' in capsys.readouterr().out
    assert ch10.ex8(answer, " Below ").status == "passed"  # a wrong guess is not a failure
    assert "the run says τ = 1.5701, above 1" in capsys.readouterr().out
    missing = ch10.ex8(answer)
    assert missing.status == "not attempted" and "prediction is missing" in missing.message
    for garbage in (1.5, "higher", ["above"], {"above": 1}):
        verdict = ch10.ex8(answer, garbage)
        assert verdict.status == "wrong" and "write the prediction as" in verdict.message
    assert ch10.ex8({"tau": 1.0, "entropy": 1.0}, "above").status == "wrong"  # run first


@pytest.fixture(scope="module")
def beam_setting():
    """The book's pretrained model, 40 of exercise 10.9's prompts, and the right counts found
    with tformer.generation.beam_search prompt by prompt, as a reader would."""
    from tformer.generation import beam_search
    from tformer.pretrained import docs_lm, split_tokens

    model, tokenizer = docs_lm()
    prompts = split_tokens(tokenizer)[1][: 100 * 180].view(100, 180)[:, :16]
    prompts = torch.cat([prompts[:20], prompts[35:55]])  # prompt 42: width 2 loses at 3 tokens
    lower, higher, ties = [], [], []
    for n_new in (2, 3):
        gap = torch.stack([beam_search(model, p, n_new, beam_width=2)[1][0]
                           - beam_search(model, p, n_new, beam_width=1)[1][0] for p in prompts])
        lower.append(int((gap < -1e-6).sum()))
        higher.append(int((gap > 1e-6).sum()))
        ties.append(int((gap.abs() <= 1e-6).sum()))
    return model, prompts, {"lower": tuple(lower), "higher": tuple(higher)}, tuple(ties)


def test_beam_width_right_counts_pass_and_the_prediction_is_compared(beam_setting, capsys):
    model, prompts, right, _ = beam_setting
    assert right["lower"][0] == 0  # 2 new tokens: width 2 never ends below greedy
    assert right["lower"][1] >= 1  # 3 new tokens: prompt 42 (fixed weights, a margin of 0.45)
    assert ch10.ex9(right, {2: "never", 3: "sometimes"}, model, prompts).status == "passed"
    out = capsys.readouterr().out
    assert '2 new tokens, "never": right' in out and '3 new tokens, "sometimes": right' in out
    verdict = ch10.ex9(right, {"2": "Sometimes", "3": "never"}, model, prompts)
    assert verdict.status == "passed"  # a wrong prediction is not a failed exercise
    out = capsys.readouterr().out
    assert '2 new tokens, "sometimes": not so' in out and "the run disagrees" in out
    # a list of 1-D prompts works as well as the (N, T) tensor
    assert ch10.ex9(right, {2: "never", 3: "never"}, model, list(prompts)).status == "passed"
    # on prompts without a case, the check says that nothing guarantees "never"
    assert ch10.ex9({"lower": (0, 0), "higher": (0, 0)}, {2: "never", 3: "never"},
                    model, prompts[:1]).status == "passed"
    assert "nothing guarantees it" in capsys.readouterr().out


def test_beam_width_missing_parts_are_not_attempted(beam_setting):
    model, prompts, right, _ = beam_setting
    missing = ch10.ex9(right, None, model, prompts)
    assert missing.status == "not attempted" and "prediction is missing" in missing.message
    assert ch10.ex9(right, {2: "never", 3: "sometimes"}).status == "not attempted"
    assert ch10.ex9(None, {2: "never", 3: "sometimes"}, model, prompts).status == "not attempted"


def test_beam_width_mistakes_get_their_hint(beam_setting):
    model, prompts, right, ties = beam_setting
    prediction = {2: "never", 3: "sometimes"}
    lower, higher = right["lower"], right["higher"]
    cases = [
        ({"lower": higher, "higher": lower}, '"higher" counts'),
        ({"lower": tuple(a + b for a, b in zip(lower, ties)), "higher": higher},
         "counted the ties"),
        ({"lower": tuple(x / 40 for x in lower), "higher": tuple(x / 40 for x in higher)},
         "not fractions"),
        ({"lower": lower, "higher": higher[::-1]}, "wrong order"),
        ({"lower": lower, "higher": (higher[0], higher[1] + 5)}, "3 new tokens"),
        ({"lower": 1, "higher": higher}, "give 2 values"),
        ({"lower": lower}, "answer should be a dict"),
    ]
    for answer, hint in cases:
        verdict = ch10.ex9(answer, prediction, model, prompts)
        assert verdict.status == "wrong" and hint in verdict.message, (answer, verdict)
    assert "write the prediction as" in ch10.ex9(right, "sometimes", model, prompts).message
    assert "write the prediction as" in ch10.ex9(right, {2: "never"}, model, prompts).message


def test_beam_width_garbage_never_crashes(beam_setting):
    model, prompts, right, _ = beam_setting
    prediction = {2: "never", 3: "sometimes"}
    for garbage_model in ("model", 3, print, lambda x: x, torch.nn.Linear(2, 2)):
        verdict = ch10.ex9(right, prediction, garbage_model, prompts)
        assert verdict.status == "wrong", verdict
    for garbage_prompts in ("x", torch.zeros(3, 4), prompts + 10_000, [prompts[0], prompts[1][:3]],
                            torch.zeros(0, 16, dtype=torch.long), [[1, 2]]):
        verdict = ch10.ex9(right, prediction, model, garbage_prompts)
        assert verdict.status == "wrong", (garbage_prompts, verdict)
    for garbage in GARBAGE + TENSOR_GARBAGE:  # rejected before any search runs
        assert ch10.ex9(garbage, prediction, model, prompts).status in ("wrong", "not attempted")
    for garbage in GARBAGE:
        assert ch10.ex9(right, garbage, model, prompts).status == "wrong"


@pytest.fixture(scope="module")
def sorter_setting():
    """The exercise's half-trained sorter, 200 strings of 6 digits (a few come out right), and
    the right answer computed with tformer.generation.greedy_decode, as a reader would."""
    from tformer.data.sorting import BOS, EOS, sorting_batch
    from tformer.encoder_decoder import train_sorter
    from tformer.generation import greedy_decode

    sorter, _ = train_sorter(seed=0, n_steps=150)
    test = sorting_batch(200, 6, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        forced = sorter(*test.inputs).argmax(-1)
    free = greedy_decode(sorter, test.source, 7, bos_id=BOS, eos_id=EOS)
    wrong = {"forced": forced != test.target_out, "free": free != test.target_out}
    first = [torch.where(w.any(1), w.long().argmax(1), 7) for w in wrong.values()]
    answer = {mode: w.float().mean(0) for mode, w in wrong.items()}
    answer["same_first"] = int((first[0] == first[1]).sum())
    return sorter, test, answer, forced, free


def test_exposure_bias_right_answer_passes_and_the_prediction_is_compared(sorter_setting, capsys):
    sorter, test, answer, *_ = sorter_setting
    assert answer["same_first"] == 200  # the two modes read the same prefix until a mistake
    assert ch10.ex10(answer, "same", sorter, test).status == "passed"
    assert 'your prediction "same": right' in capsys.readouterr().out
    assert ch10.ex10(answer, "Earlier", sorter, test).status == "passed"
    out = capsys.readouterr().out
    assert "the run disagrees" in out and "in this run" in out
    # the same count as a float, or as an integer tensor, is accepted
    assert ch10.ex10({**answer, "same_first": 200.0}, "same", sorter, test).status == "passed"
    tensor_count = {**answer, "same_first": torch.tensor(200)}
    assert ch10.ex10(tensor_count, "same", sorter, test).status == "passed"
    missing = ch10.ex10(answer, None, sorter, test)
    assert missing.status == "not attempted" and "prediction is missing" in missing.message
    assert ch10.ex10(answer, "same").status == "not attempted"


def test_exposure_bias_mistakes_get_their_hint(sorter_setting):
    sorter, test, answer, forced, free = sorter_setting
    from tformer.data.sorting import valid_next_tokens

    expected, live = valid_next_tokens(test.source, free)
    tolerant = ((free != expected) & live).float().sum(0) / live.sum(0).clamp(min=1)
    cases = [
        ({**answer, "forced": answer["free"], "free": answer["forced"]},
         "those are the free-running error rates"),
        ({**answer, "forced": (forced != test.target_in).float().mean(0)}, "target_in"),
        ({**answer, "free": 1 - answer["free"]}, "accuracies"),
        ({**answer, "free": 200 * answer["free"]}, "counts"),
        ({**answer, "forced": 100 * answer["forced"]}, "percentages"),
        ({**answer, "free": tolerant}, "shift-tolerant"),
        ({**answer, "forced": (forced != test.target_out).float().mean(1)}, "dim=0"),
        ({**answer, "free": torch.zeros(8)}, "drop the start token"),
        ({**answer, "same_first": 1.0}, "not a fraction"),
        ({**answer, "same_first": int((forced == free).all(1).sum())}, "agree at every position"),
        ({**answer, "same_first": 200 - int((forced == test.target_out).all(1).sum())},
         "without any mistake"),
        ({**answer, "free": torch.zeros(6)}, "one too few"),
        ({**answer, "same_first": 150}, "is not right"),
        ({"forced": answer["forced"]}, "answer should be a dict"),
    ]
    for wrong_answer, hint in cases:
        verdict = ch10.ex10(wrong_answer, "same", sorter, test)
        assert verdict.status == "wrong" and hint in verdict.message, (hint, verdict)
    assert "write the prediction as" in ch10.ex10(answer, 3, sorter, test).message


def test_exposure_bias_garbage_never_crashes(sorter_setting):
    sorter, test, answer, *_ = sorter_setting
    for garbage_model in ("sorter", 3, print, torch.nn.Linear(2, 2)):
        assert ch10.ex10(answer, "same", garbage_model, test).status == "wrong"
    for garbage_test in ("x", test.source, (test.source, test.target_in), torch.zeros(2, 2)):
        assert ch10.ex10(answer, "same", sorter, garbage_test).status == "wrong"
    for garbage in GARBAGE + TENSOR_GARBAGE:  # rejected before the sorter runs
        assert ch10.ex10(garbage, "same", sorter, test).status in ("wrong", "not attempted")
    for garbage in GARBAGE:
        assert ch10.ex10(answer, garbage, sorter, test).status == "wrong"
        broken = {**answer, "free": garbage, "same_first": garbage}
        assert ch10.ex10(broken, "same", sorter, test).status in ("wrong", "not attempted")
