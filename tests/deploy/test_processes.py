"""deploy.processes.free_ports: different ports, none excluded, each free when returned."""

from __future__ import annotations

import pytest

from deploy.processes import free_ports, port_is_free


def test_the_ports_are_different_and_free():
    ports = free_ports(40)
    assert len(set(ports)) == 40
    assert all(port_is_free("127.0.0.1", p) for p in ports)


def test_an_excluded_port_is_never_given():
    # The ports just handed out are free again now, and so the likeliest to be offered.
    for _ in range(5):
        before = free_ports(20)
        after = free_ports(20, exclude=before)
        assert not set(before) & set(after)


def test_no_ports_and_a_bad_count():
    assert free_ports(0) == []
    with pytest.raises(ValueError, match="n must be at least 0"):
        free_ports(-1)
