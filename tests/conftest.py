"""Fixtures of the workspace's cross-package tests: the browser of yoagent-ui's web tests."""

from web_testing import browser, screenshots, web  # noqa: F401  (fixtures)
