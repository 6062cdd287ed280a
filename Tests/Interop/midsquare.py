#!/usr/bin/env python3
"""The reference app's captcha generator (2009), written from its description alone, to pin
the lab's `midsquare` captchas to vectors made by an independent implementation.

The description: the captcha is 5 characters from "A".."Z" then "0".."9" (36 in all). The
seed is the 4-digit number written as the time's seconds then its minutes ("ssmm", UTC).
For each character, von Neumann's middle-square step: square the seed, write the square
as 8 digits (zero-padded on the left), and take the middle 4 digits as the new seed; the
character is the one at position (seed mod 36).

The generator depends only on the time's seconds and minutes, so 3,600 vectors cover it
all. Usage:
  midsquare.py vectors     one line per second of an hour: "<unix seconds> <captcha>"
  midsquare.py at UNIX     the captcha at that time
"""
import sys
import time

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def captcha(unix_seconds: int) -> str:
    moment = time.gmtime(unix_seconds)
    seed = int(f"{moment.tm_sec:02d}{moment.tm_min:02d}")
    text = ""
    for _ in range(5):
        square = f"{seed * seed:08d}"
        seed = int(square[2:6])
        text += ALPHABET[seed % len(ALPHABET)]
    return text


def main(argv):
    if argv[1:] == ["vectors"]:
        # 2009-06-08 17:00:00 UTC (the sample's year), then every second of that hour; and a
        # few times far apart, which must give the same captcha as their "ssmm" in the hour.
        start = 1244480400
        for offset in range(3600):
            print(start + offset, captcha(start + offset))
        for moment in (0, 59, 3599, 86399, 1700000000, 2000000000, 4102444799):
            print(moment, captcha(moment))
        return 0
    if len(argv) == 3 and argv[1] == "at":
        print(captcha(int(argv[2])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
