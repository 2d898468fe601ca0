"""Shared test configuration: the Hypothesis settings profiles.

The profile comes from the ``HYPOTHESIS_PROFILE`` environment variable:

* ``dev``: the default on a workstation; quick.
* ``ci``: the default when ``CI`` is set; more examples, no deadline (shared
  CI machines have erratic timing), and a reproduction blob on failure.
* ``fuzz``: what ``nox -s fuzz`` uses; many examples per property.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# Each profile starts from Hypothesis's own defaults, not from whatever profile
# is loaded (Hypothesis loads a built-in "ci" profile of its own when CI is set).
_base = settings.get_profile("default")

settings.register_profile("dev", _base, max_examples=100)
settings.register_profile("ci", _base, max_examples=300, deadline=None, print_blob=True)
settings.register_profile(
    "fuzz",
    _base,
    max_examples=2000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))
