import httpx
import pytest

from mneme_client import AsyncMneme, Mneme, MnemeError


def test_sync_calls(url, keys):
    with Mneme(url, keys["support-bot"]) as bot:
        assert bot.whoami()["id"] == "support-bot"

        w = bot.add("Dana's delivery address is Rua Augusta 12 in Lisbon.", user_id="dana",
                    type="semantic", kind="address", key="delivery_address")
        assert w["results"][0]["outcome"] == "created"
        addr = w["memories"][0]
        assert addr["agent_id"] == "support-bot" and addr["key"] == "delivery_address"

        skipped = bot.add([{"user_id": "dana", "type": "episodic", "content": "Thanks!"}])
        assert skipped["results"][0]["outcome"] == "skipped" and skipped["memories"] == []

        assert bot.get(addr["id"])["content"] == addr["content"]
        page = bot.get_all(user_id="dana", status="active")
        assert [m["id"] for m in page["memories"]] == [addr["id"]]
        assert bot.list(user_id="dana")["memories"][0]["id"] == addr["id"]

        new = bot.update(addr["id"], "Dana's delivery address is Praça do Comércio 3 in Lisbon.", if_match=1)
        assert new["version"] == 2 and new["supersedes"] == addr["id"]
        with pytest.raises(MnemeError) as stale:
            bot.update(addr["id"], "x", if_match=1)
        assert stale.value.code == "conflict" and stale.value.status == 409 and stale.value.request_id

        assert [m["id"] for m in bot.history(new["id"])] == [new["id"], addr["id"]]

        hits = bot.search("What is Dana's delivery address?", user_id="dana")
        assert "Praça do Comércio" in hits["context"]
        assert hits["memories"][0]["memory"]["id"] == new["id"]
        assert bot.recall("What is Dana's delivery address?", user_id="dana")["memories"]

        found = bot.ingest([{"role": "user", "content": "My budget is 3000 euros for the new laptops."}],
                           user_id="dana", session_id="py-s1")
        assert any(m.get("key") == "budget" and "3000" in m["content"] for m in found["memories"])

        receipt = bot.delete(new["id"])
        assert receipt["memory_id"] == new["id"] and receipt["counts"]["graph.memories"] == 2
        with pytest.raises(MnemeError) as gone:
            bot.get(new["id"])
        assert gone.value.code == "not_found" and gone.value.status == 404


def test_policy_and_erase(url, keys):
    with Mneme(url, keys["support-bot"]) as bot, Mneme(url, keys["bob"]) as bob, Mneme(url, keys["admin"]) as admin:
        m = bot.add("Erin's company is moving to Porto in May.", user_id="erin")["memories"][0]
        with pytest.raises(MnemeError) as e:
            bob.get(m["id"])
        assert e.value.code == "not_found"
        with pytest.raises(MnemeError) as e:
            bob.add([{"user_id": "bob", "agent_id": "support-bot", "type": "profile", "content": "Bob is a platinum member."}])
        assert e.value.code == "forbidden"
        kept = bot.add("Erin pays by card.", user_id="erin")["memories"][0]
        assert admin.delete(kept["id"], reason="Erin asked by mail")["memory_id"] == kept["id"]
        export = httpx.get(url + "/v1/users/erin/export", headers={"Authorization": "Bearer " + keys["admin"]}).json()
        assert [(t["id"], t["reason"]) for t in export["tombstones"]] == [(kept["id"], "Erin asked by mail")]
        receipt = admin.delete_user("erin")
        assert receipt["user_id"] == "erin" and receipt["counts"]["graph.memories"] >= 1
        assert bot.get_all(user_id="erin")["memories"] == []
    with Mneme(url, "mn_nope_notakey") as stranger:
        with pytest.raises(MnemeError) as e:
            stranger.whoami()
        assert e.value.code == "unauthenticated" and e.value.status == 401


def test_retries_503_with_one_idempotency_key(url, keys):
    seen = []
    real = httpx.HTTPTransport()

    class Flaky(httpx.BaseTransport):
        def handle_request(self, request):
            seen.append(request.content)
            if len(seen) <= 2:
                return httpx.Response(503, json={"code": "unavailable", "message": "down", "request_id": "r"})
            return real.handle_request(request)

    with Mneme(url, keys["support-bot"], transport=Flaky(), backoff=0.01) as bot:
        w = bot.add("Frank's office is in Braga.", user_id="frank")
        assert w["results"][0]["outcome"] == "created"
    assert len(seen) == 3 and seen[0] == seen[2] and b'"idempotency_key":"py-' in seen[0]

    class Down(httpx.BaseTransport):
        def handle_request(self, request):
            seen.append(request.content)
            return httpx.Response(503, json={"code": "unavailable", "message": "down", "request_id": "r"})

    seen.clear()
    with Mneme(url, keys["support-bot"], transport=Down(), backoff=0.01, max_retries=2) as bot:
        with pytest.raises(MnemeError) as e:
            bot.get("mem_x")
    assert e.value.code == "unavailable" and len(seen) == 3


async def test_async_calls(url, keys):
    async with AsyncMneme(url, keys["support-bot"]) as bot:
        w = await bot.add("Gina prefers invoices by e-mail.", user_id="gina", type="semantic", kind="billing")
        mid = w["memories"][0]["id"]
        assert (await bot.get(mid))["content"] == "Gina prefers invoices by e-mail."
        hits = await bot.search("How does Gina want her invoices?", user_id="gina")
        assert hits["memories"][0]["memory"]["id"] == mid
        assert [m["id"] for m in (await bot.get_all(user_id="gina"))["memories"]] == [mid]
        new = await bot.update(mid, "Gina prefers invoices by post.")
        assert [m["id"] for m in await bot.history(new["id"])] == [new["id"], mid]
        found = await bot.ingest([{"role": "user", "content": "My budget is 500 euros."}], user_id="gina")
        assert any(m.get("key") == "budget" for m in found["memories"])
        assert (await bot.delete(new["id"]))["memory_id"] == new["id"]
        with pytest.raises(MnemeError) as e:
            await bot.get(new["id"])
        assert e.value.code == "not_found"
    async with AsyncMneme(url, keys["admin"]) as admin:
        assert (await admin.delete_user("gina"))["user_id"] == "gina"


async def test_missing_or_malformed_key(url):
    # An empty key (an unset environment variable) sends no key at all: the
    # server's 401 comes back as the MnemeError every other refusal is.
    with Mneme(url, "") as nobody:
        with pytest.raises(MnemeError) as e:
            nobody.whoami()
        assert e.value.code == "unauthenticated" and e.value.status == 401
    async with AsyncMneme(url, "") as nobody:
        with pytest.raises(MnemeError) as e:
            await nobody.whoami()
        assert e.value.code == "unauthenticated" and e.value.status == 401
    # A key no HTTP header can carry, such as one read with its line break,
    # is refused when the client is made, naming the argument.
    for key in ("mn_acme_key\n", " mn_acme_key", "mn_acme_kéy"):
        for cls in (Mneme, AsyncMneme):
            with pytest.raises(ValueError, match="api_key"):
                cls(url, key)
