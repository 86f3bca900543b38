"""iox-roudi's configuration for psbench's runs (manifest.toml, config_script): mempools
of fixed sizes up to the first that holds the largest message of the runs, and one of
exactly its size if none does. Usage: roudi_config.py LARGEST_MESSAGE; prints the TOML."""

import sys

# Room for the chunk header (and Cyclone DDS's own header) beside the message.
CHUNK_HEADROOM = 4096
# (chunk size, count): enough chunks of the small sizes for several subscribers' full
# queues (iceoryx queues hold up to 256); large chunks are costly, fewer of them.
POOLS = ((256, 8192), (4096, 4096), (65536, 1024), ((1 << 20) + CHUNK_HEADROOM, 256))
LARGEST_COUNT = 64


def pools(largest_message: int) -> list[tuple[int, int]]:
    needed = largest_message + CHUNK_HEADROOM
    found = []
    for size, count in POOLS:
        found.append((size, count))
        if size >= needed:
            return found
    return found + [(-(-needed // 1024) * 1024, LARGEST_COUNT)]


def config(largest_message: int) -> str:
    lines = ["[general]", "version = 1", "", "[[segment]]"]
    for size, count in pools(largest_message):
        lines += ["", "[[segment.mempool]]", f"size = {size}", f"count = {count}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(config(int(sys.argv[1])))
