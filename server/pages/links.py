"""Links phones can follow: the QR code that joins a table.

A kiosk display on the Pi itself opens the scoreboard as ``localhost``; a QR code saying
``localhost`` would send every phone to itself. When the page was asked for on a loopback
address the code points at this machine's address on the local network instead (found
with a UDP socket that is connected but never sends).
"""

from __future__ import annotations

import io
import ipaddress
import socket
from urllib.parse import urlsplit

import segno

PROBE_ADDRESS = ("10.254.254.254", 9)  #: any non-local address: nothing is sent to it


def lan_address() -> str | None:
    """This machine's address on the network it would route through, if any."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(PROBE_ADDRESS)
            address = str(s.getsockname()[0])
    except OSError:
        return None
    return None if ipaddress.ip_address(address).is_loopback else address


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def public_url(host_url: str, path: str, *, lan: str | None = None) -> str:
    """``host_url`` + ``path``, with a loopback host swapped for ``lan`` when known."""
    parts = urlsplit(host_url)
    netloc = parts.netloc
    if parts.hostname and _is_loopback(parts.hostname) and lan:
        netloc = lan + (f":{parts.port}" if parts.port else "")
    return f"{parts.scheme}://{netloc}{path}"


def qr_svg(url: str) -> bytes:
    """A QR code for ``url`` as SVG: dark modules on white with the quiet zone scanners
    need (a dark page around it does not count as the light border)."""
    code = segno.make(url, error="m")
    out = io.BytesIO()
    code.save(out, kind="svg", scale=8, border=4, dark="#000", light="#fff", xmldecl=False)
    return out.getvalue()
