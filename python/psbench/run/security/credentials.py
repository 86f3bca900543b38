"""A certificate authority and the certificates it issues, made with the openssl command
(argument lists, never a shell string). RSA 2048 keys, unencrypted PKCS#8: what every
middleware psbench drives reads. Subjects are /C=XX/O=psbench/CN=<name>."""

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path

from psbench.base import programs
from psbench.base.errors import UserError

OPENSSL_TIMEOUT_S = 30.0
VALID_DAYS = 30  # a run never lasts that long; an expired certificate is a fault's only


def subject(name: str) -> str:
    return f"/C=XX/O=psbench/CN={name}"


def _openssl(*args: str) -> None:
    try:
        done = programs.output(["openssl", *args], OPENSSL_TIMEOUT_S)
    except FileNotFoundError:
        raise UserError("openssl is not installed (make setup installs it)", 2) from None
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no message"]
        raise UserError(f"openssl {args[0]} failed: {tail[0]}")


@dataclass(frozen=True)
class Authority:
    """A CA: its certificate and key."""

    name: str
    cert: Path
    key: Path

    @property
    def fingerprint(self) -> str:
        """SHA-256 of the certificate's DER form, as `openssl x509 -fingerprint` shows it."""
        pem = self.cert.read_text()
        body = pem.split("-----BEGIN CERTIFICATE-----")[1].split("-----END CERTIFICATE-----")[0]
        digest = hashlib.sha256(base64.b64decode("".join(body.split()))).hexdigest().upper()
        return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


def make_authority(folder: Path, name: str) -> Authority:
    """A self-signed CA certificate (basicConstraints CA:TRUE) and its key in folder."""
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / f"{name}.pem", folder / f"{name}.key"
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256",
        "-keyout", str(key), "-out", str(cert), "-days", str(VALID_DAYS),
        "-subj", subject(f"psbench-{name}"),
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
    )  # fmt: skip
    return Authority(name, cert, key)


@dataclass(frozen=True)
class Issued:
    cert: Path
    key: Path
    subject: str


def issue(
    authority: Authority,
    folder: Path,
    name: str,
    *,
    ips: tuple[str, ...] = (),
    expired: bool = False,
    stem: str = "",
) -> Issued:
    """A certificate for CN=name signed by authority, with its key, in folder as
    <stem>cert.pem and <stem>key.pem. ips: its subjectAltName addresses (a server's).
    expired: its validity ended before it began (openssl -days -1), which every TLS
    and DDS Security library refuses as expired."""
    folder.mkdir(parents=True, exist_ok=True)
    cert, key, csr = folder / f"{stem}cert.pem", folder / f"{stem}key.pem", folder / f"{stem}.csr"
    extensions = folder / f"{stem}extensions.cnf"
    lines = ["basicConstraints=CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment"]
    lines.append("extendedKeyUsage=serverAuth,clientAuth")
    if ips:
        lines.append("subjectAltName=" + ",".join(f"IP:{ip}" for ip in dict.fromkeys(ips)))
    extensions.write_text("\n".join(lines) + "\n")
    _openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-sha256",
        "-keyout", str(key), "-out", str(csr), "-subj", subject(name),
    )  # fmt: skip
    _openssl(
        "x509", "-req", "-sha256", "-in", str(csr),
        "-CA", str(authority.cert), "-CAkey", str(authority.key), "-CAcreateserial",
        "-out", str(cert), "-days", "-1" if expired else str(VALID_DAYS),
        "-extfile", str(extensions),
    )  # fmt: skip
    csr.unlink()
    extensions.unlink()
    return Issued(cert, key, subject(name))


def verify(ca_cert: Path, cert: Path) -> str | None:
    """None when cert verifies against ca_cert, else openssl's reason (an independent
    judge of credentials psbench made: a run that failed is explained by it)."""
    done = programs.output(
        ["openssl", "verify", "-CAfile", str(ca_cert), str(cert)], OPENSSL_TIMEOUT_S
    )
    if done.returncode == 0:
        return None
    for line in (done.stdout + done.stderr).splitlines():
        if line.startswith("error ") and ":" in line:
            return line.rsplit(":", 1)[1].strip()
    return (done.stdout + done.stderr).strip().splitlines()[-1]
