import two_agents


def test_the_order_bot_reads_the_note_through_the_grant(url, keys):
    out = two_agents.run(url, keys["support-bot"], keys["order-bot"], keys["admin"])
    assert out["before"]["memories"] == []
    assert "concierge" not in out["before"]["context"]
    ids = [r["memory"]["id"] for r in out["after"]["memories"]]
    assert out["note"]["id"] in ids
    assert out["secret"]["id"] not in ids, "a confidential note must stay above the grant's ceiling"
    assert "left with the building's concierge" in out["after"]["context"]
    assert "dispute" not in out["after"]["context"]
