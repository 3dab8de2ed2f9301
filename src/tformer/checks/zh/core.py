"""Chinese messages of :mod:`tformer.checks.core` (and single words that arrive as values)."""

# ruff: noqa: E501

WORDS: dict[str, str] = {
    "queries": "查询", "keys": "键", "values": "值", "features": "特征", "tokens": "词元",
    "positions": "位置", "heads": "注意力头", "batch": "批量", "rows": "行", "columns": "列",
    "dimensions": "维度", "channels": "通道", "vocabulary": "词表", "layers": "层",
    "steps": "步", "classes": "类别", "patches": "图像块", "scores": "分数", "weights": "权重",
    "logits": "logit", "words": "词", "sentences": "句子", "beams": "束", "samples": "样本",
    "causal (T, T)": "因果 (T, T)", "target (decoder)": "目标端（解码器）", "axis 0": "第 0 轴", "axis 1": "第 1 轴", "axis 2": "第 2 轴", "axis 3": "第 3 轴",
}

SETTING_WORDS: dict[str, str] = {  # words inside a test setting "(h = 2, d = 8, T = 5, causal)"
    "candidate": "候选译文", "causal": "因果", "no mask": "无掩码",
}

MESSAGES: dict[str, str] = {
    "(not attempted yet)": "（尚未作答）",
    "not attempted": "未作答",
    "your answer": "你的答案",
    "your function": "你的函数",
    "{name} = {value:g} is not right": "{0} = {1} 不对",
    "{name} differs from the expected values; the largest difference is at index {tuple((int(i) for i in worst))}: {value[worst]:.4g} instead of {target[worst]:.4g}": "{0} 与期望值不同；差得最多的是索引 {1} 处：{2}，应为 {3}",
    "{name} should be a tuple of integers such as (2, 8, 5, 64), got {shown}": "{0} 应是由整数组成的元组，例如 (2, 8, 5, 64)，实际得到 {1}",
    "Total: {passed}/{len(RESULTS)} passed": "合计：{0}/{1} 通过",
    "<unprintable message>": "<无法打印的消息>",
    "{name} is still the placeholder; replace it with your answer": "{0} 还是占位符；请换成你的答案",
    "{name} should be numbers, got the text {_shorten(repr(answer), 40)}": "{0} 应是数值，实际得到文本 {1}",
    "{name} should be numbers (a tensor, array or list), got a {type(answer).__name__}": "{0} 应是数值（张量、数组或列表），实际得到一个 {1}",
    "{name} should be a number, not the text {_shorten(repr(answer), 40)}": "{0} 应是一个数，而不是文本 {1}",
    "{name} should be a single number, got {type(answer).__name__}": "{0} 应是单个数，实际得到 {1}",
    "{name} should be a single number, got an array of shape {value.shape}": "{0} 应是单个数，实际得到形状为 {1} 的数组",
    "{name} is NaN — look for a division by zero or a fully masked row": "{0} 是 NaN——检查是否除以了零，或有全被遮蔽的行",
    "{name} is infinite — look for an overflow, a log of 0 or a division by 0": "{0} 是无穷大——检查是否溢出、对 0 取了对数或除以了 0",
    "{name} = {value:g} is off only by rounding; keep more digits": "{0} = {1} 只差在舍入上；请多保留几位数字",
    "{names[i]} has size {value.shape[i]}, expected {target.shape[i]}": "{0} 的大小是 {1}，应为 {2}",
    "{name} has shape {value.shape}: {'; '.join(bad)}": "{0} 的形状是 {1}：{2}",
    "{name} contains NaN — typically a softmax over a fully masked row (every score −∞); check the mask": "{0} 含有 NaN——通常是对全被遮蔽的行（每个分数都是 −∞）做了 softmax；检查掩码",
    "{name} contains ±inf — masked scores are −∞ only before the softmax; look for an overflow or a division by 0": "{0} 含有 ±inf——被遮蔽的分数只在 softmax 之前是 −∞；检查是否溢出或除以了 0",
    "{name} is off only by rounding; keep more digits": "{0} 只差在舍入上；请多保留几位数字",
    "{name} is the transpose of the expected matrix; tokens are rows in this book": "{0} 是期望矩阵的转置；本书中词元是行",
    "{name} = {float(value):.4g} is not right": "{0} = {1} 不对",
    "define the function and run the cell again": "定义这个函数，然后重新运行该单元格",
    "{name} should be a function, got {type(function).__name__}": "{0} 应是一个函数，实际得到 {1}",
    "give {size} values in a tuple: {what}": "请在一个元组里给出 {0} 个值：{1}",
    "(could not print the answer: {_shorten(_describe(error), 120)})": "（无法打印答案：{0}）",
    "No exercise has been checked in this session yet.": "本次会话中还没有检查过任何练习。",
    "{name} should be real numbers, got a complex array": "{0} 应是实数，实际得到复数数组",
    "a list of lists whose rows have different lengths, or non-numbers inside": "一个各行长度不同、或含有非数值元素的嵌套列表",
    "{name} should be numbers (a tensor, array or list), got {kind} ({_shorten(_describe(error), 80)})": "{0} 应是数值（张量、数组或列表），实际得到 {1}（{2}）",
    "{name} has shape {value.shape}, the transpose of the expected {target.shape} ({' × '.join(names)}); tokens are rows in this book": "{0} 的形状是 {1}，是期望形状 {2}（{3}）的转置；本书中词元是行",
    "{name} has {value.ndim} axes {value.shape}; expected {target.ndim} axes ({', '.join(names) or 'a single number'}) of shape {target.shape}": "{0} 有 {1} 个轴 {2}；应有 {3} 个轴（{4}），形状为 {5}",
    "a single number": "单个数",
    "the rows of {name} should sum to 1 (softmax over keys); they sum to {shown}": "{0} 的每一行之和应为 1（对键做 softmax）；实际各行之和为 {1}",
    "{name} still raises NotImplementedError — fill in its body": "{0} 仍然抛出 NotImplementedError——请补全函数体",
    "{name} should be real numbers, got a complex tensor": "{0} 应是实数，实际得到复数张量",
    "{name} should be numbers of a regular shape; got {hint}": "{0} 应是形状规整的数值；实际得到{1}",
    "the columns of {name} sum to 1 but the rows do not — the softmax ran over queries; it must run over the key axis (dim=-1)": "{0} 的每一列之和为 1，每一行却不是——softmax 是沿查询做的；它必须沿键轴（dim=-1）做",
    "replace the placeholder with your answer and run again": "把占位符换成你的答案，然后重新运行",
    "the check could not run: {_describe(error)}": "检查无法运行：{0}",
    '{name} raised {_shorten(_describe(error), 200)}': '{0} 抛出了 {1}',
    "⚠ this notebook was made for tformer {expected}, but tformer {installed} is installed: its checks may not match (install tformer v{expected} and restart the kernel)": "⚠ 本笔记本是为 tformer {0} 编写的，但已安装的是 tformer {1}：检查结果可能与之不符（请安装 tformer v{2} 并重启内核）",
}
