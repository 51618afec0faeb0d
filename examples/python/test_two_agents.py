import httpx

import two_agents


def recalled(out, key):
    return [r["memory"]["id"] for r in out[key]["memories"]]


def test_the_order_bot_reads_the_note_through_the_grant(url, keys):
    out = two_agents.run(url, keys["support-bot"], keys["order-bot"], keys["admin"])
    assert out["before"]["memories"] == []
    assert "concierge" not in out["before"]["context"]
    assert out["note"]["id"] in recalled(out, "after")
    assert out["secret"]["id"] not in recalled(out, "after"), "a confidential note must stay above the grant's ceiling"
    assert "left with the building's concierge" in out["after"]["context"]
    assert "dispute" not in out["after"]["context"]


def grants(url, admin_key):
    r = httpx.get(url + "/v1/grants", headers={"Authorization": "Bearer " + admin_key})
    r.raise_for_status()
    return r.json()["grants"]


def withdraw_leftovers(url, admin_key):
    """Withdraws grants like the example's that an earlier version of it
    left in a database the tests reuse (it did not withdraw its grant)."""
    for g in grants(url, admin_key):
        if g["grantee"] == "order-bot" and g["source"] == "support-bot" and g.get("kinds") == ["delivery_note"]:
            httpx.delete(url + "/v1/grants/" + g["id"], headers={"Authorization": "Bearer " + admin_key}).raise_for_status()


def test_on_the_demo_data_and_again(url, demo_keys):
    """As the README runs it: against the demo tenant, where Alice has many
    memories, twice; the second run tells the same story and leaves no grant
    behind."""
    support, orders, admin = demo_keys["support-bot"], demo_keys["order-bot"], demo_keys["admin"]
    withdraw_leftovers(url, admin)
    in_force = sorted(g["id"] for g in grants(url, admin))
    notes = set()
    for run in ("first", "second"):
        out = two_agents.run(url, support, orders, admin)
        notes.add(out["note"]["id"])
        assert out["note"]["id"] not in recalled(out, "before"), f"{run} run: the note came before the grant"
        assert out["note"]["id"] in recalled(out, "after"), f"{run} run: the grant did not bring the note: {out['after']['context']}"
        assert out["secret"]["id"] not in recalled(out, "after"), f"{run} run: the confidential note came through"
        assert "left with the building's concierge" in out["after"]["context"]
        assert sorted(g["id"] for g in grants(url, admin)) == in_force, f"{run} run left its grant in force"
    assert len(notes) == 1, "the second run wrote its note again rather than reinforcing it"


def test_keys_default_to_the_demos(demo_keys):
    """As the README runs it, with no key given: the demo's, which `make run` seeds."""
    assert two_agents.keys({}) == (demo_keys["support-bot"], demo_keys["order-bot"], demo_keys["admin"])
    assert two_agents.keys({"ADMIN_KEY": "mn_t_a"}) == (demo_keys["support-bot"], demo_keys["order-bot"], "mn_t_a")
    given = {"SUPPORT_KEY": "mn_t_s", "ORDER_KEY": "mn_t_o", "ADMIN_KEY": "mn_t_a"}
    assert two_agents.keys(given) == ("mn_t_s", "mn_t_o", "mn_t_a")
