"""Tool names the providers accept (``^[a-zA-Z0-9_-]{1,64}$``), unique and stable."""

from __future__ import annotations

import re

from yoagent.openapi._names import NameSet, argument_name, operation_tool_name

PROVIDER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_an_operation_id_is_kept_when_it_is_already_a_good_name() -> None:
    assert operation_tool_name("getPetById", "get", "/pet/{petId}") == "getPetById"


def test_unsafe_characters_become_underscores() -> None:
    assert operation_tool_name("orders.list-v2/all", "get", "/x") == "orders_list-v2_all"
    assert operation_tool_name("créer un animal", "post", "/x") == "cr_er_un_animal"


def test_without_an_operation_id_the_name_is_method_and_path() -> None:
    assert operation_tool_name(None, "get", "/pets/{petId}/photos") == "get_pets_petId_photos"
    assert operation_tool_name("", "delete", "/") == "delete"
    assert operation_tool_name("???", "put", "/a.b") == "put_a_b"


def test_a_taken_name_gets_a_number() -> None:
    names = NameSet()

    assert [names.claim("search") for _ in range(3)] == ["search", "search_2", "search_3"]


def test_a_long_name_is_cut_to_64_with_a_hash_that_keeps_two_long_names_apart() -> None:
    names = NameSet()
    first = "exportAllHistoricalAuditEventsForEveryRepositoryInTheOrganization_Daily"
    second = "exportAllHistoricalAuditEventsForEveryRepositoryInTheOrganization_Weekly"

    a, b = names.claim(first), names.claim(second)

    assert len(a) == len(b) == 64
    assert a != b
    assert a.startswith("exportAllHistoricalAuditEventsForEveryRepositoryInT")
    assert all(PROVIDER_NAME.match(name) for name in (a, b))
    assert NameSet().claim(first) == a  # the same input, the same name


def test_a_numbered_long_name_still_fits() -> None:
    names = NameSet()
    wanted = "x" * 80

    claimed = [names.claim(wanted) for _ in range(12)]

    assert len(set(claimed)) == 12
    assert all(PROVIDER_NAME.match(name) for name in claimed)


def test_argument_names_keep_dots_and_dashes_and_replace_the_rest() -> None:
    assert argument_name("X-Request-ID") == "X-Request-ID"
    assert argument_name("filter[status]") == "filter_status"
    assert argument_name("page.size") == "page.size"
    assert argument_name("[]") == "arg"
