"""Python client for Mneme, graph-based long-term memory for AI agents.

``Mneme`` is the synchronous client and ``AsyncMneme`` its asynchronous
twin; both raise ``MnemeError`` carrying the API's stable code.
"""

from ._client import DEFAULT_URL, AsyncMneme, Mneme, MnemeError, new_idempotency_key
from ._types import (
    Entity,
    Grant,
    IngestResult,
    Job,
    Memory,
    NewMemory,
    Page,
    Principal,
    Receipt,
    Recalled,
    RecallResult,
    Turn,
    WriteResponse,
    WriteResult,
)

__all__ = [
    "DEFAULT_URL", "AsyncMneme", "Mneme", "MnemeError", "new_idempotency_key",
    "Entity", "Grant", "IngestResult", "Job", "Memory", "NewMemory", "Page", "Principal", "Receipt",
    "Recalled", "RecallResult", "Turn", "WriteResponse", "WriteResult",
]
