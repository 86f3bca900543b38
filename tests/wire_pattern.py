"""What the wire tests look for in captured payloads: psbench's payload pattern
(core/src/message.hpp) steps by 7 from byte to byte, and 24 such steps in a row do not
happen in ciphertext, so finding them means the payload crossed the wire readable."""

PATTERN_RUN = 24  # payload bytes in a row, each 7 more than the one before


def plain_pattern(payload: bytes) -> bool:
    run = 0
    for a, b in zip(payload, payload[1:], strict=False):
        run = run + 1 if (b - a) % 256 == 7 else 0
        if run >= PATTERN_RUN:
            return True
    return False
