"""OpenAIPolicy: any OpenAI-compatible chat-completions endpoint, over plain HTTP (urllib).

The key comes from the environment (OPENAI_API_KEY, or the variable named by `key_env`), never
from a file or the command line, so that it stays out of shell history and logs. Endpoints
that ignore `n` (several local servers do) are asked again until each prompt has n samples.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from drtriton.errors import UserError
from drtriton.policy.base import Completion


@dataclass
class OpenAIConfig:
    model: str
    base_url: str = "https://api.openai.com/v1"
    key_env: str = "OPENAI_API_KEY"
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 4096
    timeout: float = 600.0
    retries: int = 3  # on 429/5xx and connection errors, with exponential back-off


class OpenAIPolicy:
    def __init__(self, config: OpenAIConfig) -> None:
        self.config = config
        self.name = config.model
        self.key = os.environ.get(config.key_env, "")
        if not self.key and not _is_local(config.base_url):
            raise UserError(f"set {config.key_env} to the API key of {config.base_url}")

    def generate(self, prompts: list[str], n: int = 1) -> list[list[Completion]]:
        return [self._sample(p, n) for p in prompts]

    def _sample(self, prompt: str, n: int) -> list[Completion]:
        out: list[Completion] = []
        while len(out) < n:
            got = self._request(prompt, n - len(out))
            if not got:
                raise UserError(f"{self.config.base_url} returned no choices")
            out.extend(got)
        return out[:n]

    def _request(self, prompt: str, n: int) -> list[Completion]:
        c = self.config
        body = {"model": c.model, "messages": [{"role": "user", "content": prompt}], "n": n,
                "temperature": c.temperature, "top_p": c.top_p, "max_tokens": c.max_tokens}  # fmt: skip
        reply = self._post("/chat/completions", body)
        usage = reply.get("usage") or {}
        choices = reply.get("choices") or []
        per = max(1, len(choices))
        return [
            Completion(
                text=(ch.get("message") or {}).get("content") or "",
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)) // per,
                finish_reason=ch.get("finish_reason") or "stop",
            )
            for ch in choices
        ]

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = self.config.base_url.rstrip("/") + path
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        data = json.dumps(body).encode()
        for attempt in range(self.config.retries + 1):
            req = urllib.request.Request(url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.config.timeout) as resp:
                    return json.loads(resp.read())
            except urllib.error.HTTPError as exc:
                if exc.code not in (429, 500, 502, 503, 504) or attempt == self.config.retries:
                    detail = exc.read().decode(errors="replace")[:500]
                    raise UserError(f"{url}: HTTP {exc.code}: {detail}") from None
            except (urllib.error.URLError, TimeoutError) as exc:
                if attempt == self.config.retries:
                    raise UserError(f"{url}: {exc}") from None
            time.sleep(min(30.0, 2.0**attempt))
        raise AssertionError("unreachable")


def _is_local(url: str) -> bool:
    return "://127.0.0.1" in url or "://localhost" in url
