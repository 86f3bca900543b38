"""nats-server's configuration for psbench's runs (manifest.toml, config_script): on the
address and port psbench chose, with a max_payload that holds the largest message of the
runs (the default is 1 MB). Usage: server_config.py LARGEST_MESSAGE PORT ADDRESS; prints
the config."""

import sys


def config(largest_message: int, port: int, address: str) -> str:
    return f"listen: {address}:{port}\nmax_payload: {max(2 * largest_message, 1 << 20)}\n"


if __name__ == "__main__":
    sys.stdout.write(config(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]))
