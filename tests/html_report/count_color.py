#!/usr/bin/python3
"""count_color.py IMAGE RRGGBB: prints how many pixels of IMAGE have exactly
that colour (Debian's python3-pil)."""

import sys

from PIL import Image

if len(sys.argv) != 3:
    sys.exit(__doc__)
wanted = tuple(int(sys.argv[2][i:i + 2], 16) for i in (0, 2, 4))
image = Image.open(sys.argv[1]).convert("RGB")
print(sum(1 for pixel in image.getdata() if pixel == wanted))
