"""The governance and permissions documents of DDS Security (OMG DDS Security 1.1, the
builtin access control plugin), the same for every DDS driver: written as XML for
reading and signed by the CA as S/MIME (openssl smime -sign) for the middleware.

The governance says what a mode protects, on domains 0..230 (the most one parser of the
builtin plugins reads, past the 1..200 a run picks by default) and
every topic psbench names (psb_<run>_<suffix>):
- auth: authenticated participants only, nothing checked against the permissions, nothing
  protected;
- access: as auth, and joining, reading and writing are checked against the permissions;
- encrypt: as access, and submessages (metadata_protection_kind) and payloads
  (data_protection_kind) encrypted;
- encrypt-payload: as access, payloads encrypted;
- encrypt-submessage: as access, submessages encrypted.
Discovery, liveliness and whole RTPS messages stay unprotected in every mode, so that the
modes differ in the user data's protection only.

The permissions of a role allow it to publish and subscribe to every psb_ topic, or, as the
fault "deny", deny it every one of them; it may still join the domain (both vendors'
plugins refuse a participant without an allow rule on its domain, before any topic). The
deny fault applies from mode access on: auth checks nothing against the permissions."""

import datetime
from pathlib import Path
from xml.sax.saxutils import escape

from psbench.base import programs
from psbench.base.errors import UserError

MODES = ("auth", "access", "encrypt", "encrypt-payload", "encrypt-submessage")
TOPICS = "psb_*"  # every topic of every run (core: psb_<run>_<suffix>)
# Fault deny: the one topic its permissions allow, none of psbench's, so that the role may
# join the domain (joining needs an allow rule on it) and is refused every psb_ topic.
UNUSED_TOPIC = "psbench_denied_every_psb_topic"
DOMAIN_MAX = 230  # the largest domain id every builtin access control plugin parses
VALIDITY_DAYS = 30  # the grants' validity from yesterday, long past any run
OPENSSL_TIMEOUT_S = 30

# mode: (access control on, metadata protection, data protection)
_PROTECTION = {
    "auth": (False, "NONE", "NONE"),
    "access": (True, "NONE", "NONE"),
    "encrypt": (True, "ENCRYPT", "ENCRYPT"),
    "encrypt-payload": (True, "NONE", "ENCRYPT"),
    "encrypt-submessage": (True, "ENCRYPT", "NONE"),
}


def checks_permissions(mode: str) -> bool:
    """Whether the mode's governance checks joining, reading and writing against the
    permissions (a deny fault can only be refused where it does)."""
    return _PROTECTION[mode][0]


_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/{xsd}">\n'
)
_DOMAINS = f"<domains><id_range><min>0</min><max>{DOMAIN_MAX}</max></id_range></domains>"


def rfc2253(subject: str) -> str:
    """An openssl subject ("/C=XX/O=psbench/CN=psbench-ping") as RFC 2253 writes it, the
    form permissions documents use: "CN=psbench-ping,O=psbench,C=XX"."""
    parts = [p for p in subject.split("/") if p]
    if not parts or any("=" not in p for p in parts):
        raise ValueError(f"subject {subject!r} is not of the form /K=V/K=V")
    return ",".join(reversed(parts))


def governance_xml(mode: str) -> str:
    """The governance document of a mode (one of MODES)."""
    if mode not in _PROTECTION:
        raise ValueError(f"security mode {mode!r} is not one of {', '.join(MODES)}")
    checked, metadata, data = _PROTECTION[mode]
    on = "true" if checked else "false"
    return (
        _HEAD.format(xsd="omg_shared_ca_governance.xsd")
        + "  <domain_access_rules>\n    <domain_rule>\n"
        + f"      {_DOMAINS}\n"
        + "      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>\n"
        + f"      <enable_join_access_control>{on}</enable_join_access_control>\n"
        + "      <discovery_protection_kind>NONE</discovery_protection_kind>\n"
        + "      <liveliness_protection_kind>NONE</liveliness_protection_kind>\n"
        + "      <rtps_protection_kind>NONE</rtps_protection_kind>\n"
        + "      <topic_access_rules>\n        <topic_rule>\n"
        + f"          <topic_expression>{TOPICS}</topic_expression>\n"
        + "          <enable_discovery_protection>false</enable_discovery_protection>\n"
        + "          <enable_liveliness_protection>false</enable_liveliness_protection>\n"
        + f"          <enable_read_access_control>{on}</enable_read_access_control>\n"
        + f"          <enable_write_access_control>{on}</enable_write_access_control>\n"
        + f"          <metadata_protection_kind>{metadata}</metadata_protection_kind>\n"
        + f"          <data_protection_kind>{data}</data_protection_kind>\n"
        + "        </topic_rule>\n      </topic_access_rules>\n"
        + "    </domain_rule>\n  </domain_access_rules>\n</dds>\n"
    )


def _grant(subject: str, deny: bool, now: datetime.datetime) -> str:
    begin = (now - datetime.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S")
    end = (now + datetime.timedelta(days=VALIDITY_DAYS)).strftime("%Y-%m-%dT%H:%M:%S")
    rules = _rule("deny_rule", TOPICS) + _rule("allow_rule", UNUSED_TOPIC) if deny else ""
    name = subject.rsplit("CN=", 1)[-1]
    return (
        f'    <grant name="{escape(name)}">\n'
        f"      <subject_name>{escape(rfc2253(subject))}</subject_name>\n"
        f"      <validity><not_before>{begin}</not_before>"
        f"<not_after>{end}</not_after></validity>\n"
        + (rules or _rule("allow_rule", TOPICS))
        + "      <default>DENY</default>\n    </grant>\n"
    )


def _rule(kind: str, topics: str) -> str:
    """An allow_rule or deny_rule on every domain, for publishing and subscribing."""
    listed = f"<topics><topic>{topics}</topic></topics>"
    return (
        f"      <{kind}>\n        {_DOMAINS}\n"
        f"        <publish>{listed}</publish>\n"
        f"        <subscribe>{listed}</subscribe>\n"
        f"      </{kind}>\n"
    )


def permissions_xml(subject: str, deny: bool = False, now: datetime.datetime | None = None) -> str:
    """The permissions document of one participant (its certificate's subject)."""
    now = now or datetime.datetime.now(datetime.UTC)
    return (
        _HEAD.format(xsd="omg_shared_ca_permissions.xsd")
        + "  <permissions>\n"
        + _grant(subject, deny, now)
        + "  </permissions>\n</dds>\n"
    )


def sign(xml_file: Path, ca) -> Path:
    """xml_file signed by ca (its .cert and .key) as S/MIME, clear text, beside it as
    .p7s."""
    out = xml_file.with_suffix(".p7s")
    argv = ["openssl", "smime", "-sign", "-text", "-in", str(xml_file), "-out", str(out)]
    argv += ["-signer", str(ca.cert), "-inkey", str(ca.key)]
    proc = programs.output(argv, OPENSSL_TIMEOUT_S)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no message"]
        raise UserError(f"openssl smime -sign {xml_file.name} failed: {tail[0]}")
    return out


def write(folder: Path, *, mode: str, subject: str, ca, deny: bool = False) -> None:
    """governance.xml/.p7s and permissions.xml/.p7s in a node's folder, for mode and the
    subject of its certificate, signed by ca (its .cert and .key: the CA the node trusts;
    a wrong-ca node's own). deny: its permissions deny every psb_ topic (fault deny)."""
    (folder / "governance.xml").write_text(governance_xml(mode))
    (folder / "permissions.xml").write_text(permissions_xml(subject, deny))
    sign(folder / "governance.xml", ca)
    sign(folder / "permissions.xml", ca)
