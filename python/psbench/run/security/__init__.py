"""Security for runs (`--security MODE`): the credentials psbench makes with openssl for
every run that asks for it (a CA, certificates and keys for the nodes and the brokers,
the signed documents a mode needs), kept in a temporary folder of their own and never in
the results (docs/security.md)."""
