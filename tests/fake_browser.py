"""A stand-in for the user's browser, for the login tests: ``python fake_browser.py URL``.

It opens ``URL`` as a browser would after the user approved at once: a GET
that follows redirects, the last one to the application's loopback listener.
Tests name it in ``BROWSER``, which `webbrowser` tries first.
"""

from __future__ import annotations

import sys

import httpx2


def main() -> int:
    with httpx2.Client(follow_redirects=True, timeout=30, trust_env=False) as http:
        response = http.get(sys.argv[1])
    return 0 if response.status_code == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
