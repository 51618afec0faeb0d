"""The server comes from the environment: MNEME_URL and MNEME_KEYS (a JSON
object of principal name to API key), as the Go test that starts memoryd
sets them."""

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
