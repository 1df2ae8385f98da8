import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import ClassVar

import pytest

from drtriton.errors import UserError
from drtriton.policy import OpenAIConfig, OpenAIPolicy


class _Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list] = []
    fail_first = 0

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.seen.append((self.path, self.headers.get("Authorization"), body))
        if _Handler.fail_first > 0:
            _Handler.fail_first -= 1
            self.send_response(503)
            self.end_headers()
            return
        # Like some local servers: ignores n and returns one choice.
        reply = {"choices": [{"message": {"content": "```python\nimport torch\n```"},
                              "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 7, "completion_tokens": 5}}  # fmt: skip
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Handler.seen = []
    yield f"http://127.0.0.1:{httpd.server_port}/v1"
    httpd.shutdown()


def test_samples_until_n_with_key_from_env(server, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-test")
    policy = OpenAIPolicy(OpenAIConfig(model="m", base_url=server, key_env="MY_KEY"))
    [group] = policy.generate(["convert this"], n=2)
    assert [c.code for c in group] == ["import torch\n"] * 2
    assert group[0].prompt_tokens == 7 and group[0].completion_tokens == 5
    path, auth, body = _Handler.seen[0]
    assert path == "/v1/chat/completions" and auth == "Bearer sk-test"
    assert body["messages"][0]["content"] == "convert this" and body["n"] == 2


def test_retries_on_503(server, monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)
    _Handler.fail_first = 1
    policy = OpenAIPolicy(OpenAIConfig(model="m", base_url=server))
    assert len(policy.generate(["p"], n=1)[0]) == 1


def test_remote_endpoint_needs_a_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UserError, match="OPENAI_API_KEY"):
        OpenAIPolicy(OpenAIConfig(model="m"))
