"""TestingError: the base of the errors this package raises."""

from __future__ import annotations

from yoagent.core import YoagentError


class TestingError(YoagentError):
    """The base of yoagent-testing's errors: a cassette that cannot be used, a request or
    tool call a replay has no recording for."""

    __test__ = False  # a class named Test… in a test module is not a test to collect
