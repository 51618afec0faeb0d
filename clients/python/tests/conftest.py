"""The server under test comes from the environment: MNEME_URL and
MNEME_KEYS, a JSON object of principal name to API key in a fresh tenant
(support-bot, order-bot, alice, bob, admin, …)."""

import json
import os

import pytest


@pytest.fixture(scope="session")
def url() -> str:
    u = os.environ.get("MNEME_URL")
    if not u:
        pytest.fail("MNEME_URL is not set: run these tests through the Go test that starts memoryd")
    return u


@pytest.fixture(scope="session")
def keys() -> dict:
    raw = os.environ.get("MNEME_KEYS")
    if not raw:
        pytest.fail("MNEME_KEYS is not set")
    return json.loads(raw)
