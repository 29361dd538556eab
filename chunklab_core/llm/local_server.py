"""llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) on 127.0.0.1
and a free port, serving one GGUF model in a subprocess: for the tests, the benchmark, and
anyone who wants a local server to point ``OpenAIBackend`` at.

``with LlamaServer(path, alias) as server: server.base_url`` starts it, waits until
``GET /v1/models`` answers (or raises with the server's log tail), and on exit stops it
(SIGTERM, then SIGKILL). ``kill()`` ends it abruptly (SIGKILL), as a crashed server.
The server serves one request at a time (llama-cpp-python holds one model behind a lock);
requests in flight queue there. Needs llama-cpp-python with its ``server`` extra.

CLI: ``chunklab-serve qwen-0.5b [--port P] [--threads N]`` serves a
registered model (``llm.models``) until interrupted and prints its base URL.

Not handled: several models, GPU offload, TLS, exposing the server beyond 127.0.0.1.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from chunklab_core.core import bounds
from chunklab_core.llm.llamacpp_backend import available_cores
from chunklab_core.core.cli_errors import command_edge


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaServer:
    def __init__(self, model_path: str | Path, alias: str, *, n_ctx: int = 4096,
                 n_threads: int | None = None, startup_timeout_s: float = 180.0,
                 port: int | None = None):
        self.model_path = Path(model_path)
        self.alias = alias
        self.n_ctx = n_ctx
        self.n_threads = n_threads or available_cores()
        self.startup_timeout_s = startup_timeout_s
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, n: int = 3000) -> str:
        return Path(self._log.name).read_text(errors="replace")[-n:]

    def __enter__(self) -> "LlamaServer":
        env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path),
             "--model_alias", self.alias, "--host", "127.0.0.1", "--port", str(self.port),
             "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads),
             "--n_threads_batch", str(self.n_threads), "--verbose", "False"],
            stdout=self._log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        message = f"llama_cpp.server did not answer within {self.startup_timeout_s} s:\n{self.log_tail()}"
        self.__exit__()
        raise RuntimeError(message)

    def kill(self) -> None:
        """SIGKILL the server (a crash: no clean shutdown)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()
        os.unlink(self._log.name)


@command_edge
def main(argv: list[str] | None = None) -> int:
    import argparse

    from chunklab_core.llm import models

    parser = argparse.ArgumentParser(description="Serve a registered GGUF model over the OpenAI API.")
    parser.add_argument("model", choices=sorted(models.MODELS))
    parser.add_argument("--port", type=bounds.int_in("port"), default=None)
    parser.add_argument("--threads", type=bounds.int_in("threads"), default=None)
    parser.add_argument("--n-ctx", type=bounds.int_in("context"), default=8192)
    args = parser.parse_args(argv)
    with LlamaServer(models.model_path(args.model), args.model, n_ctx=args.n_ctx,
                     n_threads=args.threads, port=args.port) as server:
        print(f"serving {args.model} at {server.base_url} (OPENAI_BASE_URL); Ctrl-C stops it", flush=True)
        try:
            server.process.wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
