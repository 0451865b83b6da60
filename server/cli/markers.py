"""``dicepad markers``: write the page of corner markers to print, for a pad that ``dicepad
calibrate`` cannot find by its colour (:mod:`vision.markers`).

The PNG records its resolution (300 dpi), so a print dialogue sizes it to A4 as drawn; any
other scale still works, the markers only need to stay square and sharp.
"""

from __future__ import annotations

import argparse
import struct
import sys
import zlib
from pathlib import Path

HELP = "write a page of pad corner markers to print (for a pad the colour finder cannot see)"

DEFAULT_OUT = Path("markers.png")
PNG_SIGNATURE_AND_HEADER = 8 + 25
"""Bytes before the first chunk after IHDR: the 8-byte signature and the 25-byte IHDR chunk."""

PNG_UNIT_METRE = 1
"""pHYs unit code: pixels per metre."""

METRES_PER_INCH = 0.0254


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="FILE.png",
        help=f"where to write the page (default {DEFAULT_OUT})",
    )
    parser.add_argument(
        "--size-mm",
        type=float,
        default=None,
        metavar="N",
        help="side of each marker's black square in mm (default 30, for a camera some 30-50 cm "
        "above the pad; larger for a higher camera)",
    )


def with_dpi(png: bytes, dpi: int) -> bytes:
    """``png`` with a pHYs chunk saying ``dpi`` (OpenCV writes none), so that printing at
    "actual size" gives A4."""
    per_metre = round(dpi / METRES_PER_INCH)
    body = b"pHYs" + struct.pack(">IIB", per_metre, per_metre, PNG_UNIT_METRE)
    chunk = struct.pack(">I", len(body) - 4) + body + struct.pack(">I", zlib.crc32(body))
    return png[:PNG_SIGNATURE_AND_HEADER] + chunk + png[PNG_SIGNATURE_AND_HEADER:]


def run(args: argparse.Namespace) -> int:
    import cv2

    from vision.markers import CORNER_NAMES, DEFAULT_MARKER_MM, SHEET_DPI, marker_sheet

    out: Path = args.out
    marker_mm: float = DEFAULT_MARKER_MM if args.size_mm is None else args.size_mm
    if out.suffix.lower() != ".png":
        print(f"dicepad markers: {out}: write a .png", file=sys.stderr)
        return 2
    try:
        page = marker_sheet(marker_mm=marker_mm, dpi=SHEET_DPI)
    except ValueError as exc:
        print(f"dicepad markers: {exc}", file=sys.stderr)
        return 2
    ok, png = cv2.imencode(".png", page)
    if not ok:  # pragma: no cover (a grey uint8 page always encodes)
        print("dicepad markers: could not encode the page", file=sys.stderr)
        return 1
    try:
        out.write_bytes(with_dpi(png.tobytes(), SHEET_DPI))
    except OSError as exc:
        print(f"dicepad markers: cannot write {out}: {exc}", file=sys.stderr)
        return 1
    corners = ", ".join(f"{i} {name}" for i, name in enumerate(CORNER_NAMES))
    print(f"wrote {out}: an A4 page at {SHEET_DPI} dpi with markers {corners}")
    print("print it, cut the markers out, stick each on the table just outside its pad corner")
    print("(its inner corner touching the pad's corner), then run: dicepad calibrate")
    return 0
