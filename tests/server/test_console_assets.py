"""The console's files: served at / with a strict CSP, no inline script, no HTML built from strings."""

from __future__ import annotations

import re
from importlib.resources import files

from tests.server.conftest import Api


async def test_the_console_is_served_with_a_strict_policy(api: Api) -> None:
    page = await api.http.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    # Every script has a src: nothing inline for the policy to allow.
    assert re.findall(r"<script[^>]*>", page.text) == ['<script src="/console/app.js" defer>']
    script = await api.http.get("/console/app.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    style = await api.http.get("/console/app.css")
    assert style.status_code == 200 and style.headers["content-type"].startswith("text/css")
    assert (await api.http.get("/console/other.js")).status_code == 404


def test_the_console_never_builds_markup_from_strings() -> None:
    source = files("sessionflow_server").joinpath("console", "app.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in source, sink
    # No code or style is fetched from anywhere but this server.
    assert "http://" not in source and "https://" not in source
