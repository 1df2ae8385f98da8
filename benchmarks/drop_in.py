"""Is a generated ModelNew a drop-in Model? Three models of our own with a dynamic batch.

    python benchmarks/drop_in.py [--device cpu|cuda] [--keep-slower] [--out results.json]

Each model (an MLP, a conv + batch-norm block, single-head attention) is optimized with
`drtriton optimize`'s pipeline at its example batch b, then ModelNew (same weights) is compared
with Model at batch b, 3b+2 (a size optimize never verified) and 1, in eval and in train mode.
The table gives, per call, which path ran (the kernels, or Model's forward and why:
optimize/serving.py) and the largest difference, and per model the shapes the kernels serve.
On the CPU the kernels run in Triton's interpreter (TRITON_INTERPRET=1 is set here, before
Triton is imported).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
MODELS = {
    "mlp": (
        "class Model(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.up = nn.Linear(32, 64)\n        self.down = nn.Linear(64, 16)\n\n"
        "    def forward(self, x):\n        return self.down(F.gelu(self.up(x)))\n\n"
        "def get_inputs():\n    return [torch.randn(8, 32)]\n\n"
        "def get_init_inputs():\n    return []\n",
        (32,),
    ),
    "conv_block": (
        "class Model(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 8, 3, padding=1)\n        self.bn = nn.BatchNorm2d(8)\n\n"
        "    def forward(self, images):\n        return torch.relu(self.bn(self.conv(images)))\n\n"
        "def get_inputs():\n    return [torch.randn(2, 3, 16, 16)]\n\n"
        "def get_init_inputs():\n    return []\n",
        (3, 16, 16),
    ),
    "attention": (
        "class Model(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.q = nn.Linear(16, 16)\n        self.k = nn.Linear(16, 16)\n"
        "        self.v = nn.Linear(16, 16)\n\n"
        "    def forward(self, tokens):\n"
        "        q, k, v = self.q(tokens), self.k(tokens), self.v(tokens)\n"
        "        scores = torch.softmax(q @ k.transpose(1, 2) / 4.0, dim=-1)\n"
        "        return scores @ v\n\n"
        "def get_inputs():\n    return [torch.randn(2, 8, 16)]\n\n"
        "def get_init_inputs():\n    return []\n",
        (8, 16),
    ),
}


def _check(module, example_batch: int, rest: tuple[int, ...], device: str) -> list[dict]:
    import torch

    rows = []
    torch.manual_seed(0)
    base = module.Model().to(device)
    # 3b+2: a batch none of optimize's verifications used (generic.py checks b, 2b+1 and 1).
    for batch in (example_batch, 3 * example_batch + 2, 1):
        for mode in ("eval", "train"):
            ref, new = copy.deepcopy(base), module.ModelNew().to(device)
            new.load_state_dict(ref.state_dict())
            ref.train(mode == "train")
            new.train(mode == "train")
            x = torch.randn(batch, *rest, device=device)
            why = module._drtriton_fallback(new, (x,))  # the path this call takes
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # said once per reason; `why` says it here
                got = new(x)
            want = ref(x)
            diff = (got - want).abs().max().item()
            pairs = zip(new.buffers(), ref.buffers(), strict=True)
            stats_equal = all(torch.allclose(a.float(), b.float()) for a, b in pairs)
            path = "kernels" if why is None else f"Model.forward: {why}"[:100]
            ok = torch.allclose(got, want, atol=1e-4, rtol=1e-4) and stats_equal
            rows.append({"batch": batch, "mode": mode, "path": path, "max_diff": diff,
                         "buffers_equal": stats_equal, "match": ok})  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--out", type=Path, default=None, help="JSON of every row")
    parser.add_argument("--keep-slower", action="store_true",
                        help="keep the least slow verified kernel where none beats PyTorch (on "
                        "an H200 these tiny models' kernels lose to eager: without it there is "
                        "no ModelNew to check)")  # fmt: skip
    parser.add_argument(
        "--models",
        default=",".join(MODELS),
        help=f"comma-separated subset of {', '.join(MODELS)} (default: all)",
    )
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = sorted(set(names) - set(MODELS))
    if unknown or not names:
        parser.error(
            f"--models: unknown {', '.join(unknown) or 'empty list'}; "
            f"choose from {', '.join(MODELS)}"
        )
    if args.device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"  # before Triton's first import
    from drtriton.optimize import OptimizeConfig, optimize_source
    from drtriton.verify.task import import_file

    config = OptimizeConfig(device=args.device, max_ops=3, k=1, keep_slower=args.keep_slower)
    results, failed = {}, 0
    folder = Path(tempfile.mkdtemp(prefix="drtriton-drop-in-"))
    print(
        "| model | verdict | batch | mode | path | max diff | match |\n|---|---|---|---|---|---|---|"
    )
    for name in names:
        body, rest = MODELS[name]
        began = time.monotonic()
        code = HEAD + body
        result = optimize_source(code, config)
        status = (result.verdict or {}).get("status", result.error or "no kernel")
        if not result.model_new:
            print(f"| {name} | {status} | - | - | no ModelNew | - | - |")
            results[name] = {"status": status}
            continue
        path = folder / f"{name}_new.py"
        path.write_text(result.model_new)
        module = import_file(str(path), f"drop_in_{name}")
        rows = _check(module, _example_batch(code), rest, args.device)
        for r in rows:
            failed += not r["match"]
            print(f"| {name} | {status} | {r['batch']} | {r['mode']} | {r['path']} | "
                  f"{r['max_diff']:.2e} | {'yes' if r['match'] else 'NO'} |")  # fmt: skip
        served = result.shapes.get("served") or "-"
        print(f"| {name} | serves {served} | | | {result.shapes.get('why') or ''} | | |")
        results[name] = {"status": status, "rows": rows, "shapes": result.shapes,
                         "seconds": round(time.monotonic() - began, 1)}  # fmt: skip
        if args.out:  # after each model: a run cut short keeps the models it checked
            tmp = args.out.with_suffix(".tmp")
            tmp.write_text(json.dumps(results, indent=1))
            tmp.replace(args.out)
    print(f"{failed} of the calls differ from Model")
    return 1 if failed else 0


def _example_batch(code: str) -> int:
    namespace: dict = {}
    exec(code, namespace)  # our own model text
    return int(namespace["get_inputs"]()[0].shape[0])


if __name__ == "__main__":
    sys.exit(main())
