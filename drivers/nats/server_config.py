"""nats-server's configuration for psbench's runs (manifest.toml, config_script): on the
port psbench chose, with a max_payload that holds the largest message of the runs (the
default is 1 MB). Usage: server_config.py LARGEST_MESSAGE PORT; prints the config."""

import sys


def config(largest_message: int, port: int) -> str:
    return f"listen: 127.0.0.1:{port}\nmax_payload: {max(2 * largest_message, 1 << 20)}\n"


if __name__ == "__main__":
    sys.stdout.write(config(int(sys.argv[1]), int(sys.argv[2])))
