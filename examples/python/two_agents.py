"""Two agents share what they know about a customer through a grant.

The support bot talks to Alice and remembers how she wants her parcels
delivered. The order bot, which ships her next order, may read none of
that until an admin grants it the support bot's episodic memories up to
"internal"; then it recalls the delivery note, and still not the
confidential one.

    MNEME_URL=http://127.0.0.1:8080 SUPPORT_KEY=… ORDER_KEY=… ADMIN_KEY=… python two_agents.py
"""

from __future__ import annotations

import os
from typing import Dict

from mneme_client import Mneme

QUESTION = "How should Alice's parcel be delivered?"


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

        before = orders.search(QUESTION, user_id=user)
        grant = admin.create_grant(grantee="order-bot", source="support-bot", types=["episodic"],
                                   kinds=["delivery_note"], max_sensitivity="internal")
        after = orders.search(QUESTION, user_id=user)
        return {"note": note, "secret": secret, "grant": grant, "before": before, "after": after}


def main() -> None:
    env = os.environ
    out = run(env.get("MNEME_URL", "http://127.0.0.1:8080"), env["SUPPORT_KEY"], env["ORDER_KEY"], env["ADMIN_KEY"])
    print("order bot before the grant:", len(out["before"]["memories"]), "memories")  # type: ignore[index]
    print("order bot after the grant:")
    print(out["after"]["context"])  # type: ignore[index]


if __name__ == "__main__":
    main()
