"""The OpenSplice 5.5.1 configuration of the spliced daemon psbench starts for transport
shm (manifest.toml, [[services]] spliced, config_script). Usage: spliced_config.py
LARGEST_MESSAGE PORT [ADDRESS]; prints the XML.

The daemon's domain is named after the port psbench gave the service, psbench_spliced_PORT:
the driver derives the same name from its option broker=...:PORT (drivers/opensplice/
settings.h, domain_xml), so a node joins exactly this daemon's shared memory, and two
psbench processes on one host never share a daemon. No network service: the data stays
in the shared memory of this host."""

import sys

MIB = 1 << 20
# spliced keeps every sample (readers' histories included) in its shared memory: room for
# many of the largest, beside 256 MiB for everything else (OpenSplice's default is 10 MiB).
BASE_DATABASE = 256 * MIB
LARGEST_SAMPLES = 32


def domain_name(port: int) -> str:
    return f"psbench_spliced_{port}"


def config(largest_message: int, port: int) -> str:
    size = BASE_DATABASE + LARGEST_SAMPLES * largest_message
    return f"""<OpenSplice>
  <Domain>
    <Name>{domain_name(port)}</Name>
    <Database><Size>{size}</Size></Database>
    <!-- how long spliced waits for its services when told to stop: psbench stops a
         service with SIGTERM and kills it 3 s later -->
    <ServiceTerminatePeriod>1.0</ServiceTerminatePeriod>
  </Domain>
</OpenSplice>
"""


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: spliced_config.py LARGEST_MESSAGE PORT [ADDRESS]")
    print(config(int(sys.argv[1]), int(sys.argv[2])), end="")
