"""The client's address, as every per-address limit counts it (log-in lock-outs, the API's bad
tokens, e-mails asked for).

Behind a reverse proxy every request comes from the proxy's address (``REMOTE_ADDR``): keyed on
it, one attacker would lock everybody out. The proxy appends the address it saw to
``X-Forwarded-For``; everything to the left of that is what the client wrote, and a client can
write anything. So the header is read only when the request comes from a proxy named in
``settings.TRUSTED_PROXIES`` (addresses or networks), from the right, skipping the trusted
proxies themselves: the first address no trusted proxy would have written is the client's. A
request from anywhere else is keyed on ``REMOTE_ADDR``, whatever its headers say.
"""

from __future__ import annotations

import ipaddress
from functools import cache

from django.conf import settings
from django.http import HttpRequest

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@cache
def _trusted(proxies: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(proxy.strip(), strict=False) for proxy in proxies)


def _parsed(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip().strip("[]")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    return getattr(address, "ipv4_mapped", None) or address


def _is_trusted(address, networks: tuple[Network, ...]) -> bool:
    return address is not None and any(address in network for network in networks)


def client_address(request: HttpRequest) -> str | None:
    """The address of the client behind this request (see the module); ``None`` if there is
    none (a request made in code, as Django's test client's ``force_login`` makes)."""
    remote = request.META.get("REMOTE_ADDR") or None
    networks = _trusted(tuple(settings.TRUSTED_PROXIES))
    if not _is_trusted(_parsed(remote or ""), networks):
        return remote
    hops = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
    for hop in reversed(hops):
        address = _parsed(hop)
        if address is None:
            break  # garbage from the client's side of the chain: trust nothing further left
        if not _is_trusted(address, networks):
            return str(address)
    return remote
