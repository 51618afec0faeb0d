"""Two agents share what they know about a customer through a grant.

The support bot talks to Alice and remembers how she wants her parcels
delivered. The order bot, which ships her next order, may read none of
that until an admin grants it the support bot's delivery notes up to
"internal"; then it recalls the delivery note, and still not the
confidential one. The example withdraws its grant at the end, so that
running it again tells the same story; its two notes stay (a second run
reinforces them rather than writing them twice).

Run it against `make run` (the demo tenant, where Alice has a history):

    python two_agents.py

It talks to http://127.0.0.1:8080 with the demo keys of support-bot,
order-bot and admin that `make run` seeds (seed/demo.json); MNEME_URL,
SUPPORT_KEY, ORDER_KEY and ADMIN_KEY name another server and other keys.

The question says "parcels" as the note does: recall's full-text side
matches English words as written (no stemming), so "parcel" would not find
"parcels"; among Alice's many memories the note then passes no relevance
gate, and only a user with few memories would get it all the same.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, Mapping, Tuple

from mneme_client import Mneme

QUESTION = "How should Alice's parcels be delivered?"


def run(url: str, support_key: str, order_key: str, admin_key: str, user: str = "alice") -> Dict[str, object]:
    with Mneme(url, support_key) as support, Mneme(url, order_key) as orders, Mneme(url, admin_key) as admin:
        note = support.add(
            f"{user.capitalize()} asked that parcels be left with the building's concierge.",
            user_id=user, type="episodic", kind="delivery_note",
        )["memories"][0]
        secret = support.add(
            f"{user.capitalize()} mentioned a dispute with the concierge about a lost parcel.",
            user_id=user, type="episodic", kind="delivery_note", sensitivity="confidential",
        )["memories"][0]

        question = QUESTION.replace("Alice", user.capitalize())
        before = orders.search(question, user_id=user)
        grant = admin.create_grant(grantee="order-bot", source="support-bot", types=["episodic"],
                                   kinds=["delivery_note"], max_sensitivity="internal")
        try:
            after = orders.search(question, user_id=user)
        finally:
            admin.delete_grant(grant["id"])
        return {"note": note, "secret": secret, "grant": grant, "before": before, "after": after}


def demo_keys() -> Dict[str, str]:
    """The demo tenant's API keys by principal id, as `make run` seeds them."""
    demo = Path(__file__).resolve().parents[2] / "seed" / "demo.json"
    return {k["id"]: k["key"] for k in json.loads(demo.read_text(encoding="utf-8"))["api_keys"]}


def keys(env: Mapping[str, str]) -> Tuple[str, str, str]:
    """SUPPORT_KEY, ORDER_KEY and ADMIN_KEY, each the demo's when not set."""
    given = (env.get("SUPPORT_KEY"), env.get("ORDER_KEY"), env.get("ADMIN_KEY"))
    if all(given):
        return given  # type: ignore[return-value]
    demo = demo_keys()
    support, order, admin = given
    return support or demo["support-bot"], order or demo["order-bot"], admin or demo["admin"]


def main() -> None:
    env = os.environ
    out = run(env.get("MNEME_URL", "http://127.0.0.1:8080"), *keys(env))
    note = out["note"]["id"]  # type: ignore[index]
    before = [r["memory"]["id"] for r in out["before"]["memories"]]  # type: ignore[index]
    print("order bot before the grant:", len(before), "memories, the delivery note",
          "among them" if note in before else "not among them")
    print("order bot after the grant (withdrawn again since):")
    print(out["after"]["context"])  # type: ignore[index]


if __name__ == "__main__":
    main()
