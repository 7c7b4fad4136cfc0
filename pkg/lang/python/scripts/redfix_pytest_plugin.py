"""redfix's pytest plugin: the collected node ids, and one coverage context
per test, named by its node id.

With REDFIX_COLLECTED set, the node ids collected are written there as a
JSON list. Under coverage.py, each test runs (setup, call and teardown) in
a dynamic context named by its node id: coverage's own test_function
contexts name a function, not a parametrized case, by its module's import
name.
"""
import json
import os

import pytest

_COLLECTED = os.environ.get("REDFIX_COLLECTED")


def pytest_collection_finish(session):
    if _COLLECTED:
        with open(_COLLECTED, "w", encoding="utf-8") as f:
            json.dump([item.nodeid for item in session.items], f)


def _coverage():
    try:
        import coverage
    except ImportError:
        return None
    current = getattr(coverage.Coverage, "current", None)
    return current() if current else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cov = _coverage()
    if cov is not None:
        cov.switch_context(item.nodeid)
    yield
    if cov is not None:
        cov.switch_context("")
