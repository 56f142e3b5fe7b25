"""The conformance suite against every framework installed in this workspace (today: builtin).

The plugin parametrizes the imported test with every (case, framework); see conformance/README.md.
"""

from sessionflow.testing.conformance import test_conformance

__all__ = ["test_conformance"]
