"""Sync and async clients of Mneme's REST API.

Both build the same requests (``_Calls``) and differ only in how they send
them: a 503 is retried with exponential backoff and jitter (or the server's
Retry-After), every write carries an idempotency key that stays the same
across retries, and an error status raises ``MnemeError`` with the API's code.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union
from urllib.parse import quote

import httpx

from ._types import (
    Grant,
    IngestResult,
    Job,
    Memory,
    MemoryType,
    NewMemory,
    Page,
    Principal,
    Receipt,
    RecallResult,
    Sensitivity,
    Turn,
    WriteResponse,
)

DEFAULT_URL = "http://127.0.0.1:8080"


class MnemeError(Exception):
    """An answer with an error status: the API's stable ``code`` (such as
    ``not_found``, ``forbidden``, ``unavailable``), the HTTP ``status``, the
    ``message`` and the ``request_id`` to quote in a report."""

    def __init__(self, status: int, code: str, message: str, request_id: str = "") -> None:
        super().__init__(f"{code or 'error'}: {message} (HTTP {status}, request {request_id})")
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id


def new_idempotency_key() -> str:
    """A fresh random idempotency key for a write."""
    return "py-" + uuid.uuid4().hex


@dataclass
class _Request:
    method: str
    path: str
    params: Dict[str, str] = field(default_factory=dict)
    json: Any = None
    headers: Dict[str, str] = field(default_factory=dict)


def _seg(s: str) -> str:
    return quote(s, safe="")


def _drop_none(d: Mapping[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _with_keys(memories: Sequence[NewMemory]) -> List[Dict[str, Any]]:
    base = new_idempotency_key()
    out = []
    for i, m in enumerate(memories):
        m = dict(m)
        m.setdefault("idempotency_key", f"{base}:{i}")
        out.append(m)
    return out


class _Calls:
    """Builds each API call as a request; subclasses send them."""

    @staticmethod
    def _add(memories: Sequence[NewMemory]) -> _Request:
        return _Request("POST", "/v1/memories", json={"memories": _with_keys(memories)})

    @staticmethod
    def _memory(content: str, user_id: str, type: MemoryType, **fields: Any) -> NewMemory:
        m: Dict[str, Any] = {"user_id": user_id, "type": type, "content": content}
        m.update(_drop_none(fields))
        return m  # type: ignore[return-value]

    @staticmethod
    def _add_async(memories: Sequence[NewMemory]) -> _Request:
        return _Request(
            "POST", "/v1/memories", params={"async": "true"}, json={"memories": list(memories)},
            headers={"Idempotency-Key": new_idempotency_key()},
        )

    @staticmethod
    def _search(query: str, user_id: str, **options: Any) -> _Request:
        return _Request("POST", "/v1/recall", json=_drop_none({"user_id": user_id, "query": query, **options}))

    @staticmethod
    def _get(memory_id: str) -> _Request:
        return _Request("GET", f"/v1/memories/{_seg(memory_id)}")

    @staticmethod
    def _list(**filters: Any) -> _Request:
        params = {k: str(v) for k, v in _drop_none(filters).items()}
        return _Request("GET", "/v1/memories", params=params)

    @staticmethod
    def _update(memory_id: str, if_match: Optional[int], **changes: Any) -> _Request:
        headers = {"If-Match": f'"{if_match}"'} if if_match else {}
        return _Request("PATCH", f"/v1/memories/{_seg(memory_id)}", json=_drop_none(changes), headers=headers)

    @staticmethod
    def _history(memory_id: str) -> _Request:
        return _Request("GET", f"/v1/memories/{_seg(memory_id)}/history")

    @staticmethod
    def _confirm(memory_id: str) -> _Request:
        return _Request("POST", f"/v1/memories/{_seg(memory_id)}/confirm")

    @staticmethod
    def _delete(memory_id: str, reason: Optional[str] = None) -> _Request:
        params = {"reason": reason} if reason else {}
        return _Request("DELETE", f"/v1/memories/{_seg(memory_id)}", params=params)

    @staticmethod
    def _delete_user(user_id: str) -> _Request:
        return _Request("DELETE", f"/v1/users/{_seg(user_id)}")

    @staticmethod
    def _ingest(turns: Iterable[Turn], user_id: str, session_id: Optional[str], wait: bool) -> _Request:
        body = _drop_none({"user_id": user_id, "session_id": session_id, "turns": list(turns)})
        if wait:
            return _Request("POST", "/v1/ingest", params={"sync": "true"}, json=body)
        return _Request("POST", "/v1/ingest", json=body, headers={"Idempotency-Key": new_idempotency_key()})

    @staticmethod
    def _job(job_id: str) -> _Request:
        return _Request("GET", f"/v1/jobs/{_seg(job_id)}")

    @staticmethod
    def _create_grant(grantee: str, source: str, types: Sequence[MemoryType], max_sensitivity: Sensitivity,
                      kinds: Optional[Sequence[str]], expires_at: Optional[str]) -> _Request:
        body = _drop_none({"grantee": grantee, "source": source, "types": list(types), "max_sensitivity": max_sensitivity,
                           "kinds": list(kinds) if kinds else None, "expires_at": expires_at})
        return _Request("POST", "/v1/grants", json=body)


class _Base:
    def __init__(self, base_url: str, api_key: str, max_retries: int, backoff: float, max_backoff: float) -> None:
        self._base = base_url.rstrip("/")
        self._headers = {"Accept": "application/json"}
        # No key (an unset environment variable, say) sends none, and the
        # server's 401 unauthenticated is a MnemeError as any refusal is. A
        # key no header can carry (a line break read with it, a space, a
        # letter outside ASCII) is no key the server issued: it is refused
        # here, rather than by httpx at the first call.
        if api_key:
            if not all("!" <= c <= "~" for c in api_key):
                raise ValueError("api_key: must be printable ASCII without spaces or line breaks, as issued")
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._retries = max(0, max_retries)
        self._backoff = backoff
        self._max_backoff = max_backoff

    def _delay(self, attempt: int, response: httpx.Response) -> float:
        d = min(self._backoff * (2 ** attempt), self._max_backoff)
        d = d / 2 + random.uniform(0, d / 2)
        try:
            return max(d, float(response.headers.get("Retry-After", "")))
        except ValueError:
            return d

    def _retry(self, attempt: int, response: httpx.Response) -> bool:
        return response.status_code == 503 and attempt < self._retries

    @staticmethod
    def _decode(response: httpx.Response) -> Any:
        if response.status_code >= 300:
            code, message, rid = "", response.reason_phrase, response.headers.get("X-Request-ID", "")
            try:
                body = response.json()
                code, message, rid = body.get("code", ""), body.get("message", message), body.get("request_id", rid)
            except ValueError:
                pass
            raise MnemeError(response.status_code, code, message, rid)
        if not response.content:
            return None
        return response.json()


Content = Union[str, Sequence[NewMemory]]


class Mneme(_Base, _Calls):
    """A synchronous client of one Mneme deployment with one API key.

    ``add`` / ``search`` (``recall``) / ``get`` / ``get_all`` (``list``) /
    ``update`` / ``history`` / ``delete`` / ``delete_user`` / ``ingest`` are
    the calls agents make; ``confirm``, ``whoami``, ``job``, ``create_grant``
    and ``delete_grant`` round them out.
    """

    def __init__(self, base_url: str = DEFAULT_URL, api_key: str = "", *, timeout: float = 30.0,
                 max_retries: int = 3, backoff: float = 0.2, max_backoff: float = 5.0,
                 transport: Optional[httpx.BaseTransport] = None) -> None:
        super().__init__(base_url, api_key, max_retries, backoff, max_backoff)
        self._http = httpx.Client(base_url=self._base, headers=self._headers, timeout=timeout, transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Mneme":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, r: _Request) -> Any:
        attempt = 0
        while True:
            response = self._http.request(r.method, r.path, params=r.params or None, json=r.json, headers=r.headers)
            if not self._retry(attempt, response):
                return self._decode(response)
            time.sleep(self._delay(attempt, response))
            attempt += 1

    def add(self, content: Content, *, user_id: str = "", type: MemoryType = "semantic", kind: Optional[str] = None,
            key: Optional[str] = None, session_id: Optional[str] = None, sensitivity: Optional[Sensitivity] = None,
            importance: Optional[float] = None, source: Optional[str] = None,
            idempotency_key: Optional[str] = None) -> WriteResponse:
        """Store a memory (content and the keyword fields), or a list of
        NewMemory dicts, in one transaction."""
        if isinstance(content, str):
            memories: Sequence[NewMemory] = [self._memory(
                content, user_id, type, kind=kind, key=key, session_id=session_id, sensitivity=sensitivity,
                importance=importance, source=source, idempotency_key=idempotency_key)]
        else:
            memories = content
        return self._send(self._add(memories))

    def add_async(self, memories: Sequence[NewMemory]) -> Job:
        """Queue memories for a worker to write; returns the job."""
        return self._send(self._add_async(memories))

    def search(self, query: str, *, user_id: str, k: Optional[int] = None, types: Optional[List[MemoryType]] = None,
               kinds: Optional[List[str]] = None, session_id: Optional[str] = None, budget: Optional[int] = None,
               as_of: Optional[str] = None) -> RecallResult:
        """Recall the memories that matter for query, with a context block."""
        return self._send(self._search(query, user_id, k=k, types=types, kinds=kinds, session_id=session_id,
                                       budget=budget, as_of=as_of))

    recall = search

    def get(self, memory_id: str) -> Memory:
        return self._send(self._get(memory_id))

    def get_all(self, *, user_id: Optional[str] = None, type: Optional[MemoryType] = None, kind: Optional[str] = None,
                status: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page:
        """One page of the memories the caller may read, newest first."""
        return self._send(self._list(user_id=user_id, type=type, kind=kind, status=status, limit=limit, cursor=cursor))

    list = get_all

    def update(self, memory_id: str, content: Optional[str] = None, *, kind: Optional[str] = None,
               sensitivity: Optional[Sensitivity] = None, importance: Optional[float] = None,
               confidence: Optional[float] = None, if_match: Optional[int] = None) -> Memory:
        """Write a new version; with if_match, only over that version."""
        return self._send(self._update(memory_id, if_match, content=content, kind=kind, sensitivity=sensitivity,
                                       importance=importance, confidence=confidence))

    def history(self, memory_id: str) -> List[Memory]:
        return self._send(self._history(memory_id))["memories"]

    def confirm(self, memory_id: str) -> Memory:
        return self._send(self._confirm(memory_id))

    def delete(self, memory_id: str, *, reason: Optional[str] = None) -> Receipt:
        """Erase a memory; reason (at most 200 characters) stays on its tombstones."""
        return self._send(self._delete(memory_id, reason))

    def delete_user(self, user_id: str) -> Receipt:
        return self._send(self._delete_user(user_id))

    def ingest(self, turns: Iterable[Turn], *, user_id: str, session_id: Optional[str] = None) -> IngestResult:
        """Extract memories from conversation turns now."""
        return self._send(self._ingest(turns, user_id, session_id, True))

    def ingest_async(self, turns: Iterable[Turn], *, user_id: str, session_id: Optional[str] = None) -> Job:
        return self._send(self._ingest(turns, user_id, session_id, False))

    def job(self, job_id: str) -> Job:
        return self._send(self._job(job_id))

    def whoami(self) -> Principal:
        return self._send(_Request("GET", "/v1/whoami"))

    def create_grant(self, *, grantee: str, source: str, types: Sequence[MemoryType],
                     max_sensitivity: Sensitivity = "internal", kinds: Optional[Sequence[str]] = None,
                     expires_at: Optional[str] = None) -> Grant:
        return self._send(self._create_grant(grantee, source, types, max_sensitivity, kinds, expires_at))

    def delete_grant(self, grant_id: str) -> None:
        self._send(_Request("DELETE", f"/v1/grants/{_seg(grant_id)}"))


class AsyncMneme(_Base, _Calls):
    """The asynchronous twin of ``Mneme``: the same calls, awaited."""

    def __init__(self, base_url: str = DEFAULT_URL, api_key: str = "", *, timeout: float = 30.0,
                 max_retries: int = 3, backoff: float = 0.2, max_backoff: float = 5.0,
                 transport: Optional[httpx.AsyncBaseTransport] = None) -> None:
        super().__init__(base_url, api_key, max_retries, backoff, max_backoff)
        self._http = httpx.AsyncClient(base_url=self._base, headers=self._headers, timeout=timeout, transport=transport)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncMneme":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _send(self, r: _Request) -> Any:
        attempt = 0
        while True:
            response = await self._http.request(r.method, r.path, params=r.params or None, json=r.json, headers=r.headers)
            if not self._retry(attempt, response):
                return self._decode(response)
            await asyncio.sleep(self._delay(attempt, response))
            attempt += 1

    async def add(self, content: Content, *, user_id: str = "", type: MemoryType = "semantic",
                  kind: Optional[str] = None, key: Optional[str] = None, session_id: Optional[str] = None,
                  sensitivity: Optional[Sensitivity] = None, importance: Optional[float] = None,
                  source: Optional[str] = None, idempotency_key: Optional[str] = None) -> WriteResponse:
        if isinstance(content, str):
            memories: Sequence[NewMemory] = [self._memory(
                content, user_id, type, kind=kind, key=key, session_id=session_id, sensitivity=sensitivity,
                importance=importance, source=source, idempotency_key=idempotency_key)]
        else:
            memories = content
        return await self._send(self._add(memories))

    async def add_async(self, memories: Sequence[NewMemory]) -> Job:
        return await self._send(self._add_async(memories))

    async def search(self, query: str, *, user_id: str, k: Optional[int] = None,
                     types: Optional[List[MemoryType]] = None, kinds: Optional[List[str]] = None,
                     session_id: Optional[str] = None, budget: Optional[int] = None,
                     as_of: Optional[str] = None) -> RecallResult:
        return await self._send(self._search(query, user_id, k=k, types=types, kinds=kinds, session_id=session_id,
                                             budget=budget, as_of=as_of))

    recall = search

    async def get(self, memory_id: str) -> Memory:
        return await self._send(self._get(memory_id))

    async def get_all(self, *, user_id: Optional[str] = None, type: Optional[MemoryType] = None,
                      kind: Optional[str] = None, status: Optional[str] = None, limit: Optional[int] = None,
                      cursor: Optional[str] = None) -> Page:
        return await self._send(self._list(user_id=user_id, type=type, kind=kind, status=status, limit=limit,
                                           cursor=cursor))

    list = get_all

    async def update(self, memory_id: str, content: Optional[str] = None, *, kind: Optional[str] = None,
                     sensitivity: Optional[Sensitivity] = None, importance: Optional[float] = None,
                     confidence: Optional[float] = None, if_match: Optional[int] = None) -> Memory:
        return await self._send(self._update(memory_id, if_match, content=content, kind=kind,
                                             sensitivity=sensitivity, importance=importance, confidence=confidence))

    async def history(self, memory_id: str) -> List[Memory]:
        return (await self._send(self._history(memory_id)))["memories"]

    async def confirm(self, memory_id: str) -> Memory:
        return await self._send(self._confirm(memory_id))

    async def delete(self, memory_id: str, *, reason: Optional[str] = None) -> Receipt:
        """Erase a memory; reason (at most 200 characters) stays on its tombstones."""
        return await self._send(self._delete(memory_id, reason))

    async def delete_user(self, user_id: str) -> Receipt:
        return await self._send(self._delete_user(user_id))

    async def ingest(self, turns: Iterable[Turn], *, user_id: str, session_id: Optional[str] = None) -> IngestResult:
        return await self._send(self._ingest(turns, user_id, session_id, True))

    async def ingest_async(self, turns: Iterable[Turn], *, user_id: str, session_id: Optional[str] = None) -> Job:
        return await self._send(self._ingest(turns, user_id, session_id, False))

    async def job(self, job_id: str) -> Job:
        return await self._send(self._job(job_id))

    async def whoami(self) -> Principal:
        return await self._send(_Request("GET", "/v1/whoami"))

    async def create_grant(self, *, grantee: str, source: str, types: Sequence[MemoryType],
                           max_sensitivity: Sensitivity = "internal", kinds: Optional[Sequence[str]] = None,
                           expires_at: Optional[str] = None) -> Grant:
        return await self._send(self._create_grant(grantee, source, types, max_sensitivity, kinds, expires_at))

    async def delete_grant(self, grant_id: str) -> None:
        await self._send(_Request("DELETE", f"/v1/grants/{_seg(grant_id)}"))
