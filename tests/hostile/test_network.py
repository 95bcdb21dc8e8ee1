"""A submission that attacks the host's Redis from its module and from its tests.

The server listens on every host address; the sandbox has no network, so after the grade the
key is still there, nothing was written, and the server never saw a connection it did not get
from this test.
"""

from __future__ import annotations

import pytest

from hostile_helpers import assert_contained, hostile_impl, hostile_tests


@pytest.mark.parametrize("backend_name", ["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_the_sandbox_cannot_reach_the_hosts_redis(backend_name, redis_server, grade_hostile, sandbox_backend):
    client = redis_server.client
    connections_before = client.connections_received()
    graded = grade_hostile(impl=hostile_impl("network"), tests=hostile_tests("network"),
                           backend=sandbox_backend(backend_name))
    assert_contained(graded)
    assert client.command("GET", redis_server.key) == redis_server.value
    assert client.command("GET", "pwned") is None
    assert client.connections_received() == connections_before, "a connection came from somewhere"
    assert len(client.clients()) == 1, client.clients()  # only this test's own connection
