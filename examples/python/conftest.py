"""The server comes from the environment: MNEME_URL, MNEME_KEYS (a JSON
object of principal name to API key, in a fresh tenant) and MNEME_DEMO_KEYS
(the demo tenant's keys by principal id, the demo loaded as `make run` loads
it), as the Go test that starts memoryd sets them."""

import json
import os

import pytest


@pytest.fixture(scope="session")
def url() -> str:
    if not os.environ.get("MNEME_URL"):
        pytest.fail("MNEME_URL is not set: run these tests through the Go test that starts memoryd")
    return os.environ["MNEME_URL"]


@pytest.fixture(scope="session")
def keys() -> dict:
    return json.loads(os.environ.get("MNEME_KEYS") or "{}")


@pytest.fixture(scope="session")
def demo_keys() -> dict:
    if not os.environ.get("MNEME_DEMO_KEYS"):
        pytest.fail("MNEME_DEMO_KEYS is not set: run these tests through the Go test that loads the demo")
    return json.loads(os.environ["MNEME_DEMO_KEYS"])
