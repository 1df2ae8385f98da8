from drtriton.policy import extract_code


def test_tags_last_block_wins():
    text = "draft <triton_code>\nimport a\n</triton_code> fixed: <triton_code>\nimport b\n</triton_code>"
    assert extract_code(text) == "import b\n"


def test_unclosed_tag_takes_rest():
    assert extract_code("ok\n<triton_code>\nimport torch\nx = 1") == "import torch\nx = 1\n"


def test_fence_inside_tags_is_unwrapped():
    text = "<triton_code>\n```python\nimport torch\n```\n</triton_code>"
    assert extract_code(text) == "import torch\n"


def test_fenced_last_block_wins():
    text = "```python\nimport a\n```\nthen\n```py\nimport b\n```\nbye"
    assert extract_code(text) == "import b\n"


def test_unclosed_fence_takes_rest():
    assert extract_code("here:\n```python\ndef f():\n    return 1\n") == "def f():\n    return 1\n"


def test_bare_fence_and_tildes():
    assert extract_code("```\nimport x\n```") == "import x\n"
    assert extract_code("~~~python\nimport y\n~~~") == "import y\n"


def test_tags_beat_fences_and_think_is_ignored():
    text = "<think>```python\nimport bad\n```</think>```python\nimport a\n```<triton_code>import t</triton_code>"
    assert extract_code(text) == "import t\n"
    assert extract_code("<think><triton_code>import bad</triton_code></think>nothing") == ""


def test_plain_code_and_prose():
    assert extract_code("import torch\ndef f(): pass") == "import torch\ndef f(): pass\n"
    assert extract_code("I cannot do that.") == ""
    assert extract_code("<triton_code></triton_code>") == ""


def test_policy_as_search_candidates():
    from drtriton.policy import Completion, PolicyCandidates

    class Echo:
        name = "echo"

        def generate(self, prompts, n=1):
            texts = [
                "```python\nimport a\n```",
                "<triton_code>import a</triton_code>",
                "no",
                "```\nimport b\n```",
            ]
            return [[Completion(t) for t in texts[:n]] for _ in prompts]

    assert PolicyCandidates(Echo()).candidates("def fused_operator(x0): ...", 4) == [
        "import a\n",
        "import b\n",
    ]
