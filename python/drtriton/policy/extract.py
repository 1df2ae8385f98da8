"""Pull candidate code out of a model's completion.

Models wrap code in many ways; the rules, in order:
1. <triton_code> blocks (the synthetic prompt's format). The last one wins: models often draft,
   then correct. An unclosed final tag (a completion cut at max_new_tokens) takes the rest of
   the text.
2. Fenced code blocks (```python, ```py, ``` or ~~~). The last one wins; an unclosed final fence
   takes the rest of the text.
3. Otherwise the whole completion, if it looks like Python code (imports or defs); else "".
A fence inside a tag block is unwrapped (models sometimes put ```python inside the tags).
"""

from __future__ import annotations

import re

_TAG_OPEN = re.compile(r"<triton_code>", re.IGNORECASE)
_TAG_CLOSE = re.compile(r"</triton_code>", re.IGNORECASE)
_FENCE = re.compile(r"^[ \t]*(```|~~~)[ \t]*([\w+-]*)[^\n]*$", re.MULTILINE)
_CODE_HINT = re.compile(r"^\s*(import |from \S+ import |def |class |@triton)", re.MULTILINE)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def _tag_blocks(text: str) -> list[str]:
    blocks = []
    pos = 0
    while (start := _TAG_OPEN.search(text, pos)) is not None:
        end = _TAG_CLOSE.search(text, start.end())
        if end is None:
            blocks.append(text[start.end() :])
            break
        blocks.append(text[start.end() : end.start()])
        pos = end.end()
    return blocks


def _fenced_blocks(text: str) -> list[str]:
    blocks = []
    fences = list(_FENCE.finditer(text))
    i = 0
    while i < len(fences):
        opening = fences[i]
        # A closing fence is a bare fence of the same kind.
        j = i + 1
        while j < len(fences) and (fences[j].group(1) != opening.group(1) or fences[j].group(2)):
            j += 1
        if j >= len(fences):
            blocks.append(text[opening.end() + 1 :])
            break
        blocks.append(text[opening.end() + 1 : fences[j].start()])
        i = j + 1
    return blocks


def _unwrap(block: str) -> str:
    inner = _fenced_blocks(block)
    return inner[-1] if inner else block


def extract_code(completion: str) -> str:
    """The candidate source inside `completion`, or "" when it holds no code."""
    text = _THINK.sub("", completion)
    tags = [b for b in _tag_blocks(text) if b.strip()]
    if tags:
        return _clean(_unwrap(tags[-1]))
    fenced = [b for b in _fenced_blocks(text) if b.strip()]
    if fenced:
        return _clean(fenced[-1])
    return _clean(text) if _CODE_HINT.search(text) else ""


def _clean(code: str) -> str:
    code = code.strip("\n")
    return code + "\n" if code.strip() else ""
