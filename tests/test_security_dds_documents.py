"""The DDS Security documents psbench writes (run/security/dds_documents.py): what each
mode's governance sets, what the permissions allow or deny, and signatures that openssl
itself verifies against the CA (and refuses once the text is changed)."""

import subprocess
import xml.etree.ElementTree as ET

import pytest

from psbench.run.security import credentials, dds_documents

# mode -> (join/read/write access control, metadata_protection_kind, data_protection_kind)
EXPECTED = {
    "auth": ("false", "NONE", "NONE"),
    "access": ("true", "NONE", "NONE"),
    "encrypt": ("true", "ENCRYPT", "ENCRYPT"),
    "encrypt-payload": ("true", "NONE", "ENCRYPT"),
    "encrypt-submessage": ("true", "ENCRYPT", "NONE"),
}


@pytest.mark.parametrize("mode", list(EXPECTED))
def test_each_mode_sets_what_it_says(mode):
    root = ET.fromstring(dds_documents.governance_xml(mode))
    rule = root.find("domain_access_rules/domain_rule")
    checked, metadata, data = EXPECTED[mode]
    assert rule.findtext("allow_unauthenticated_participants") == "false"
    assert rule.findtext("enable_join_access_control") == checked
    assert rule.findtext("domains/id_range/min") == "0"
    assert rule.findtext("domains/id_range/max") == "230"
    for kind in ("discovery", "liveliness", "rtps"):  # the same in every mode
        assert rule.findtext(f"{kind}_protection_kind") == "NONE"
    [topic] = rule.findall("topic_access_rules/topic_rule")
    assert topic.findtext("topic_expression") == "psb_*"
    assert topic.findtext("enable_read_access_control") == checked
    assert topic.findtext("enable_write_access_control") == checked
    assert topic.findtext("metadata_protection_kind") == metadata
    assert topic.findtext("data_protection_kind") == data


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="sign-only"):
        dds_documents.governance_xml("sign-only")


def test_permissions_name_the_subject_and_allow_or_deny_every_psbench_topic():
    subject = "/C=XX/O=psbench/CN=psbench-sub"
    assert dds_documents.rfc2253(subject) == "CN=psbench-sub,O=psbench,C=XX"
    allowed = ET.fromstring(dds_documents.permissions_xml(subject))
    [grant] = allowed.findall("permissions/grant")
    assert grant.get("name") == "psbench-sub"
    assert grant.findtext("subject_name") == "CN=psbench-sub,O=psbench,C=XX"
    assert grant.findtext("default") == "DENY"
    [allow] = grant.findall("allow_rule")
    assert [t.text for t in allow.iter("topic")] == ["psb_*", "psb_*"]
    assert grant.find("deny_rule") is None

    denied = ET.fromstring(dds_documents.permissions_xml(subject, deny=True))
    [grant] = denied.findall("permissions/grant")
    rules = [r.tag for r in grant if r.tag.endswith("_rule")]
    assert rules == ["deny_rule", "allow_rule"]  # denied first; joining stays allowed
    assert [t.text for t in grant.find("deny_rule").iter("topic")] == ["psb_*", "psb_*"]
    assert all(not t.text.startswith("psb_") for t in grant.find("allow_rule").iter("topic"))


def _verify(signed, ca) -> subprocess.CompletedProcess:
    argv = ["openssl", "smime", "-verify", "-in", str(signed), "-CAfile", str(ca.cert)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def test_the_signed_documents_verify_against_the_ca_and_only_unchanged(tmp_path):
    ca = credentials.make_authority(tmp_path / "ca", "ca")
    folder = tmp_path / "node"
    issued = credentials.issue(ca, folder, "psbench-pong")
    dds_documents.write(folder, mode="encrypt", subject=issued.subject, ca=ca)
    for name in ("governance", "permissions"):
        done = _verify(folder / f"{name}.p7s", ca)
        assert done.returncode == 0, done.stderr
        # The signed text (S/MIME clear text: a text/plain part, CRLF lines) is the XML.
        signed = done.stdout.replace("\r\n", "\n").removeprefix("Content-Type: text/plain\n\n")
        assert signed == (folder / f"{name}.xml").read_text()
    tampered = folder / "tampered.p7s"
    text = (folder / "governance.p7s").read_text()
    tampered.write_text(text.replace("<data_protection_kind>ENCRYPT", "<data_protection_kind>NONE"))
    assert _verify(tampered, ca).returncode != 0
    other = credentials.make_authority(tmp_path / "other", "other-ca")
    assert _verify(folder / "permissions.p7s", other).returncode != 0
