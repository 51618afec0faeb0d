"""The shapes of Mneme's API answers and requests, as typed dictionaries."""

from __future__ import annotations

from typing import Dict, List, Literal, Optional, TypedDict

MemoryType = Literal["episodic", "semantic", "procedural", "profile"]
Sensitivity = Literal["public", "internal", "confidential", "restricted"]
Role = Literal["user", "assistant", "system", "tool"]


class Entity(TypedDict, total=False):
    id: str
    kind: str
    name: str
    aliases: List[str]


class Memory(TypedDict, total=False):
    id: str
    tenant: str
    user_id: str
    agent_id: str
    session_id: str
    type: MemoryType
    kind: str
    key: str
    content: str
    status: str
    sensitivity: Sensitivity
    importance: float
    confidence: float
    source: str
    entities: List[Entity]
    valid_from: str
    valid_to: str
    created_at: str
    updated_at: str
    version: int
    access_count: int
    last_accessed_at: str
    supersedes: str
    evidence_count: int
    outcome: str
    redacted: List[str]


class NewMemory(TypedDict, total=False):
    user_id: str  # required
    type: MemoryType  # required
    content: str  # required
    kind: str
    key: str
    agent_id: str
    session_id: str
    sensitivity: Sensitivity
    importance: float
    confidence: float
    source: str
    entities: List[Entity]
    idempotency_key: str


class WriteResult(TypedDict, total=False):
    outcome: str  # created, reinforced or skipped
    reason: str
    id: str
    status: str
    redacted: List[str]


class WriteResponse(TypedDict):
    memories: List[Memory]
    results: List[WriteResult]


class Recalled(TypedDict):
    memory: Memory
    score: float
    explain: Dict[str, object]


class RecallResult(TypedDict, total=False):
    memories: List[Recalled]
    context: str
    truncated: bool
    used_chars: int
    session: Dict[str, object]
    search: Dict[str, object]


class Page(TypedDict, total=False):
    memories: List[Memory]
    next_cursor: str


class Turn(TypedDict, total=False):
    role: Role
    content: str
    at: str


class IngestResult(TypedDict, total=False):
    memories: List[Memory]
    reason: str


class JobMemory(TypedDict, total=False):
    id: str
    outcome: str
    status: str
    reason: str


class Job(TypedDict, total=False):
    id: str
    kind: str
    status: str  # queued, running, done or failed
    accepted_at: str
    finished_at: str
    attempts: int
    memories: List[JobMemory]
    error: str


class Receipt(TypedDict, total=False):
    tenant: str
    user_id: str
    memory_id: str
    erased_at: str
    counts: Dict[str, int]


class Principal(TypedDict, total=False):
    tenant: str
    kind: str
    id: str
    roles: List[str]


class Grant(TypedDict, total=False):
    id: str
    tenant: str
    grantee: str
    source: str
    types: List[MemoryType]
    kinds: List[str]
    max_sensitivity: Sensitivity
    expires_at: Optional[str]
    created_at: str
