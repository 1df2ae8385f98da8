"""Triton's interpreter with every program of a launch on its own thread, all at once.

Triton's interpreter runs a launch's programs one after another, so a kernel whose programs wait
for each other (the teacher's cooperative rows kernel, core/codegen/rows_coop.cc) would wait
forever there: each program would wait for one that starts only after it ends. On the GPU a
cooperative launch keeps every program resident at once; `concurrent_programs()` gives the
interpreter the same property, each program a thread with its own program id (the interpreter's
builder keeps the id in one attribute, made thread-local here), and the launch returns when all
have ended. The interpreter's atomics run in C++ under the GIL, one at a time, as atomics.
Written against Triton 3.6's interpreter (GridExecutor, interpreter_builder, _patch_lang).
"""

from __future__ import annotations

import contextlib
import inspect
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def concurrent_programs() -> Iterator[None]:
    from triton.runtime import interpreter

    builder = interpreter.interpreter_builder
    local = threading.local()
    cls = type(builder)
    saved = builder.__dict__.pop("grid_idx", None)
    cls.grid_idx = property(
        lambda self: getattr(local, "idx", None), lambda self, value: setattr(local, "idx", value)
    )
    original_init = interpreter.GridExecutor.__init__

    def init(self: Any, fn: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, fn, *args, **kwargs)
        threads: list[threading.Thread] = []
        errors: list[BaseException] = []

        def program(**call_args: Any) -> None:
            idx = builder.grid_idx

            def run() -> None:
                local.idx = idx
                try:
                    fn(**call_args)
                except BaseException as exc:  # re-raised on the launching thread
                    errors.append(exc)

            thread = threading.Thread(target=run, daemon=True)
            thread.start()
            threads.append(thread)
            if idx == tuple(n - 1 for n in builder.grid_dim):  # the launch's last program
                for t in threads:
                    t.join(timeout=120)
                    if t.is_alive():
                        raise TimeoutError("a program is still running after 120 s")
                threads.clear()
                if errors:
                    raise errors[0]

        program.__signature__ = inspect.signature(fn)
        program.wrapped_program = fn
        self.fn = program

    original_patch = interpreter._patch_lang
    interpreter.GridExecutor.__init__ = init
    # The language is patched in the kernel's own globals, not this wrapper's.
    interpreter._patch_lang = lambda fn: original_patch(getattr(fn, "wrapped_program", fn))
    try:
        yield
    finally:
        interpreter._patch_lang = original_patch
        interpreter.GridExecutor.__init__ = original_init
        del cls.grid_idx
        builder.grid_idx = saved
