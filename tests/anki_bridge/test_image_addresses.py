"""Which addresses an `image_url` may reach: public ones; loopback only when allowed; never
private, link-local, metadata, site- or unique-local, nor any IPv6 form embedding them."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer

from anki_bridge.images import ImageProblem
from core import image_fetch as image_client
from core.image_fetch import address_refusal, image_fetch

ALWAYS_REFUSED = [
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("100.64.0.1", "carrier-grade NAT"),
    ("169.254.1.1", "link-local"),
    ("169.254.169.254", "cloud metadata"),
    ("100.100.100.200", "cloud metadata"),
    ("fd00:ec2::254", "cloud metadata"),
    ("0.0.0.0", "private"),
    ("0.1.2.3", "private"),
    ("224.0.0.1", "multicast"),
    ("240.0.0.1", "240.0.0.1 is a"),
    ("fe80::1", "link-local"),
    ("fec0::1", "site-local"),
    ("fc00::1", "unique-local"),
    ("fd12:3456::1", "unique-local"),
    ("::", ":: is a"),
    ("ff02::1", "multicast"),
    ("::ffff:10.0.0.1", "IPv4-mapped address embedding 10.0.0.1"),
    ("::ffff:169.254.169.254", "cloud metadata"),
    ("::10.0.0.1", "IPv4-compatible address embedding 10.0.0.1"),
    ("2002:a00:1::1", "6to4 address embedding 10.0.0.1"),
    ("2002:a9fe:a9fe::", "6to4 address embedding the cloud metadata address"),
    ("64:ff9b::a00:1", "NAT64 address embedding 10.0.0.1"),
    ("64:ff9b::a9fe:a9fe", "cloud metadata"),
    ("64:ff9b:1::1", "local-use NAT64"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
]
LOOPBACK = [
    "127.0.0.1",
    "127.8.9.10",
    "::1",
    "::ffff:127.0.0.1",
    "2002:7f00:1::1",
    "64:ff9b::7f00:1",
]
PUBLIC = [
    "93.184.216.34",
    "2606:2800:220:1:248:1893:25c8:1946",
    "::ffff:93.184.216.34",
    "2002:5db8:d822::1",
    "64:ff9b::5db8:d822",
]


@pytest.mark.parametrize("allow_loopback", [False, True])
@pytest.mark.parametrize(("ip", "reason"), ALWAYS_REFUSED)
def test_non_public_addresses_are_refused_whatever_the_switch(
    ip: str, reason: str, allow_loopback: bool
) -> None:
    refusal = address_refusal(ip, allow_loopback=allow_loopback)
    assert refusal is not None
    assert reason in refusal


@pytest.mark.parametrize("ip", LOOPBACK)
def test_the_switch_admits_loopback_only(ip: str) -> None:
    refusal = address_refusal(ip)
    assert refusal is not None
    assert "loopback" in refusal
    assert address_refusal(ip, allow_loopback=True) is None


@pytest.mark.parametrize("ip", PUBLIC)
def test_public_addresses_pass(ip: str) -> None:
    assert address_refusal(ip) is None


@given(st.ip_addresses(v=4).filter(lambda a: not a.is_global and not a.is_loopback))
def test_every_embedding_of_a_non_public_ipv4_address_is_refused(v4: ipaddress.IPv4Address) -> None:
    value = int(v4)
    for embedded in (
        ipaddress.IPv6Address((0x2002 << 112) | (value << 80)),  # 6to4
        ipaddress.IPv6Address((0x64FF9B << 96) | value),  # NAT64
        ipaddress.IPv6Address((0xFFFF << 32) | value),  # IPv4-mapped
    ):
        assert address_refusal(str(embedded), allow_loopback=True) is not None, embedded


def test_a_redirect_to_the_metadata_address_is_refused_with_the_switch_on(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    connected: list[str] = []
    real_get = image_client._get
    monkeypatch.setattr(
        image_client,
        "_get",
        lambda target, **kw: connected.append(target.url) or real_get(target, **kw),
    )
    httpserver.expect_request("/img").respond_with_data(
        "", status=302, headers={"Location": "http://169.254.169.254/latest/meta-data/"}
    )
    with pytest.raises(ImageProblem) as caught:
        image_fetch(
            httpserver.url_for("/img"),
            allow_private=True,
            private_setting="ANKI_IMAGE_ALLOW_PRIVATE",
            max_bytes=1_000_000,
            timeout=5.0,
        )
    assert caught.value.code == "image_refused"
    assert "169.254.169.254 is a cloud metadata address" in caught.value.message
    assert "never fetched" in caught.value.message
    assert len(connected) == 1  # the first hop only: the metadata address was never contacted
    assert "169.254" not in connected[0]
