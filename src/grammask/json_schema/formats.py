"""``format`` values as anchored patterns over the decoded string.

What it computes: ``FORMAT_PATTERNS``, a map from a draft 2020-12 format
name to an anchored pattern (``^...$``, the syntax ``strings.translate_pattern``
reads) whose language is the format's grammar; ``NOT_ENFORCED``, a map from
the formats grammask knows but does not assert to the reason (the warning
text); ``LOOSER`` and ``UNCOUNTED_MAX_LENGTH``, what an asserted pattern
leaves unchecked, and ``looseness(name, bounds)``, the warning text for it
given the most-characters bounds the string node enforces beside the format;
``STRICTER``, what an asserted pattern refuses beyond the format, and
``negatable(name)``, whether the strings failing a format are exactly those
outside its pattern (read by ``applicators`` to negate a ``format``);
``asserted_patterns(schema)``, the (keyword, pattern) pairs a string
schema's ``pattern`` and asserted ``format`` require, read by the string
node, the ``not`` of strings and the disjointness proof alike.  ``string_nodes`` turns a pattern into a regex over the JSON string
text with ``translate_pattern(pattern, ascii_escapes=False)``: printable
ASCII characters are accepted raw only (``json.dumps`` never escapes them;
their DFAs stay small), every other character in any JSON spelling.

Data layout: each pattern is assembled from named pieces that follow the
ABNF rule of the same name in its source, one rule per constant, so a
pattern can be checked against its RFC line by line:

- date, time, date-time: RFC 3339 section 5.6, with real month lengths and
  leap years.  Second 60 is refused: a leap second is only valid at
  23:59:60 UTC, which an offset makes non-regular to state.
- duration: RFC 3339 appendix A (``P`` then date or time parts, or weeks).
- email: RFC 5321 ``Mailbox``: a dot-string or quoted-string local part,
  a domain of RFC 1123 labels or an address literal (IPv4, or ``IPv6:``
  with RFC 5321's ``IPv6-addr``; a General-address-literal needs a tag
  registered with IANA, and IPv6 is the only one); RFC 5321's size
  limits, section 4.5.3.1, are not counted, as in the ABNF.
- hostname: RFC 1123 labels (letters, digits, inner hyphens) of 1..63
  characters (RFC 1034 section 3.1; a DFA of 128 states, 6 when labels
  were not counted), dot-separated, no trailing dot (the
  JSON-Schema-Test-Suite refuses "example."; ``fqdn`` accepts it).  Labels
  with "--" in 3rd and 4th position are accepted, as ``fqdn`` does.
  Looser, and warned: the name's 253 characters are not counted
  (``UNCOUNTED_MAX_LENGTH``: the DFA of the name with its length counted
  has 23,812 states, built in ~0.8 s, past ``Config.max_dfa_states`` =
  10,000 for a plain regex; a ``maxLength`` of at most 253 enforced
  beside it, an intersection within ``Config.max_product_dfa_states``, or
  a ``pattern`` as short, makes that part moot),
  and ``xn--`` A-labels are not decoded (``LOOSER``: RFC 5891 Punycode of
  an IDNA2008 U-label is not regular in a small DFA; ``fqdn`` does not
  decode them either).
- ipv4: RFC 2673 dotted quad, no leading zeros; ipv6: RFC 4291 section 2.2
  as written in RFC 3986's ``IPv6address`` (no zone index).
- uri, uri-reference: RFC 3986 ``URI`` and ``URI-reference``; iri,
  iri-reference: RFC 3987 ``IRI`` and ``IRI-reference`` (``ucschar`` in
  every component, ``iprivate`` in the query too).  ``host`` is
  ``IP-literal / reg-name``: ``IPv4address`` is omitted because every
  dotted quad is already a ``reg-name`` (same language).
- uri-template: RFC 6570 section 2 (level 4 syntax).
- json-pointer: RFC 6901 section 3; relative-json-pointer:
  draft-bhutton-relative-json-pointer-00 section 3 (with index manipulation).
- uuid: RFC 4122 section 3 string form (hex digits of either case).

Invariant: each pattern is anchored at both ends and accepts exactly its
grammar's strings (except where a bullet above says stricter or looser;
a format in ``LOOSER`` warns at every translation);
the tests (``tests/test_json_schema_formats.py``) check each against
``jsonschema``'s format checker and the JSON-Schema-Test-Suite's
``optional/format`` cases.
"""

from __future__ import annotations

from grammask.json_schema.keywords import MORE_PATTERNS

# ------------------------------------------------------------- RFC 3339 date/time

_YEAR = "(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
_LEAP_YEAR = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_MONTH_DAY = ("(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
              "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
              "|02-(?:0[1-9]|1[0-9]|2[0-8]))")
_DATE = f"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
_TIME = ("(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?"
         "(?:[Zz]|[+\\-](?:[01][0-9]|2[0-3]):[0-5][0-9])")

# RFC 3339 appendix A: dur-second .. dur-week, duration.
_DUR_SECOND = "[0-9]+S"
_DUR_MINUTE = f"[0-9]+M(?:{_DUR_SECOND})?"
_DUR_HOUR = f"[0-9]+H(?:{_DUR_MINUTE})?"
_DUR_TIME = f"T(?:{_DUR_HOUR}|{_DUR_MINUTE}|{_DUR_SECOND})"
_DUR_DAY = "[0-9]+D"
_DUR_MONTH = f"[0-9]+M(?:{_DUR_DAY})?"
_DUR_YEAR = f"[0-9]+Y(?:{_DUR_MONTH})?"
_DUR_DATE = f"(?:{_DUR_DAY}|{_DUR_MONTH}|{_DUR_YEAR})(?:{_DUR_TIME})?"
_DUR_WEEK = "[0-9]+W"
_DURATION = f"P(?:{_DUR_DATE}|{_DUR_TIME}|{_DUR_WEEK})"

# ------------------------------------------------------------- hosts and addresses

# RFC 1123 section 2.1 labels: letters, digits and inner hyphens.  A hostname
# label holds 1..63 of them (RFC 1034 section 3.1); an email domain's labels
# are not counted (see the module docstring).
_LDH_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9\\-]*[A-Za-z0-9])?"
_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9\\-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = f"{_LABEL}(?:\\.{_LABEL})*"
HOSTNAME_MAX_LENGTH = 253
"""RFC 1034 section 3.1's 255 octets of a name on the wire, as text: 253
characters (no trailing dot).  ``_HOSTNAME`` does not count it: see
``UNCOUNTED_MAX_LENGTH``."""
_DEC_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = f"{_DEC_OCTET}\\.{_DEC_OCTET}\\.{_DEC_OCTET}\\.{_DEC_OCTET}"
_H16 = "[0-9A-Fa-f]{1,4}"
_LS32 = f"(?:{_H16}:{_H16}|{_IPV4})"


def _ipv6() -> str:
    """RFC 3986 ``IPv6address``: its nine alternatives, the n-th (n = 0..8)
    with n - 1 groups compressed away (n = 0: none, "::" absent)."""
    branches = [f"(?:{_H16}:){{6}}{_LS32}"]
    # After "::": k full "h16:" groups then ls32 (k = 5..0), then h16, then nothing.
    tails = [f"(?:{_H16}:){{{k}}}{_LS32}" if k else _LS32 for k in range(5, -1, -1)]
    tails += [_H16, ""]
    for before, tail in enumerate(tails):
        # Alternative `before`: at most `before - 1` "h16:" then h16, before "::".
        if before == 0:
            head = ""
        elif before == 1:
            head = f"(?:{_H16})?"
        else:
            head = f"(?:(?:{_H16}:){{0,{before - 1}}}{_H16})?"
        branches.append(f"{head}::{tail}")
    return "(?:" + "|".join(branches) + ")"


_IPV6 = _ipv6()

# RFC 5321 section 4.1.2 (Mailbox) and 4.1.3 (address literals).
_ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-]"
_DOT_STRING = f"{_ATEXT}+(?:\\.{_ATEXT}+)*"
# qtextSMTP = %d32-33 / %d35-91 / %d93-126; quoted-pairSMTP = %d92 %d32-126.
_QUOTED_STRING = '"(?:[ !#-\\[\\]-~]|\\\\[ -~])*"'
_SNUM = "(?:25[0-5]|2[0-4][0-9]|[01][0-9]{2}|[0-9]{1,2})"
_IPV4_ADDRESS_LITERAL = f"{_SNUM}(?:\\.{_SNUM}){{3}}"
_IPV6_HEX = "[0-9A-Fa-f]{1,4}"


def _hex_groups(count: int) -> str:
    """``count`` IPv6-hex groups separated by ":" (empty for 0)."""
    return f"{_IPV6_HEX}(?::{_IPV6_HEX}){{{count - 1}}}" if count else ""


def _ipv6_addr() -> str:
    """RFC 5321 ``IPv6-addr``: IPv6-full, IPv6-comp (at most 6 groups beside
    "::"), IPv6v4-full and IPv6v4-comp (at most 4 groups beside "::" and the
    IPv4 part), each compressed form one alternative per split of its groups."""
    branches = [_hex_groups(8), f"{_hex_groups(6)}:{_IPV4_ADDRESS_LITERAL}"]
    for total, tail in ((6, ""), (4, _IPV4_ADDRESS_LITERAL)):
        for before in range(total + 1):
            for after in range(total + 1 - before):
                right = _hex_groups(after) + (":" if after and tail else "")
                branches.append(f"{_hex_groups(before)}::{right}{tail}")
    return "(?:" + "|".join(branches) + ")"


# address-literal: the IPv4 form, or the "IPv6:" tag (an ABNF string: any
# case) with its address; General-address-literal tags must be registered
# with IANA (section 4.1.3), and IPv6 is the only one there.
_ADDRESS_LITERAL = f"\\[(?:{_IPV4_ADDRESS_LITERAL}|[Ii][Pp][Vv]6:{_ipv6_addr()})\\]"
_EMAIL = (f"(?:{_DOT_STRING}|{_QUOTED_STRING})@"
          f"(?:{_LDH_LABEL}(?:\\.{_LDH_LABEL})*|{_ADDRESS_LITERAL})")

# ------------------------------------------------------------- RFC 3986 / RFC 3987

_UNRESERVED = "A-Za-z0-9\\-._~"
_SUB_DELIMS = "!$&'()*+,;="
_PCT_ENCODED = "%[0-9A-Fa-f]{2}"
# RFC 3987 ucschar (BMP part, then one range per plane 1..14) and iprivate.
_UCSCHAR = ("\\u00a0-\\ud7ff\\uf900-\\ufdcf\\ufdf0-\\uffef"
            + "".join(f"\\U{plane:04x}0000-\\U{plane:04x}fffd" for plane in range(1, 14))
            + "\\U000e1000-\\U000efffd")
_IPRIVATE = "\\ue000-\\uf8ff\\U000f0000-\\U000ffffd\\U00100000-\\U0010fffd"


def _rfc3986(iri: bool) -> dict[str, str]:
    """RFC 3986's ``URI`` and ``URI-reference`` (``iri=False``), or RFC 3987's
    ``IRI`` and ``IRI-reference`` (``iri=True``: ``unreserved`` also holds
    ``ucschar``, the query also ``iprivate``), one local per ABNF rule."""
    unreserved = _UNRESERVED + (_UCSCHAR if iri else "")
    pchar = f"(?:[{unreserved}{_SUB_DELIMS}:@]|{_PCT_ENCODED})"
    segment_nz_nc = f"(?:[{unreserved}{_SUB_DELIMS}@]|{_PCT_ENCODED})+"
    segment = f"{pchar}*"
    segment_nz = f"{pchar}+"
    query_extra = _IPRIVATE if iri else ""
    query = f"(?:[{unreserved}{_SUB_DELIMS}:@/?{query_extra}]|{_PCT_ENCODED})*"
    fragment = f"(?:[{unreserved}{_SUB_DELIMS}:@/?]|{_PCT_ENCODED})*"
    scheme = "[A-Za-z][A-Za-z0-9+\\-.]*"
    userinfo = f"(?:[{unreserved}{_SUB_DELIMS}:]|{_PCT_ENCODED})*"
    ipvfuture = f"[vV][0-9A-Fa-f]+\\.[{_UNRESERVED}{_SUB_DELIMS}:]+"
    ip_literal = f"\\[(?:{_IPV6}|{ipvfuture})\\]"
    reg_name = f"(?:[{unreserved}{_SUB_DELIMS}]|{_PCT_ENCODED})*"
    authority = f"(?:{userinfo}@)?(?:{ip_literal}|{reg_name})(?::[0-9]*)?"
    path_abempty = f"(?:/{segment})*"
    path_absolute = f"/(?:{segment_nz}(?:/{segment})*)?"
    path_noscheme = f"{segment_nz_nc}(?:/{segment})*"
    path_rootless = f"{segment_nz}(?:/{segment})*"
    hier_part = f"(?://{authority}{path_abempty}|{path_absolute}|{path_rootless}|)"
    relative_part = f"(?://{authority}{path_abempty}|{path_absolute}|{path_noscheme}|)"
    tail = f"(?:\\?{query})?(?:#{fragment})?"
    absolute = f"{scheme}:{hier_part}{tail}"
    relative = f"{relative_part}{tail}"
    return {"absolute": absolute, "reference": f"(?:{absolute}|{relative})"}


_URI = _rfc3986(iri=False)
_IRI = _rfc3986(iri=True)

# ------------------------------------------------------------- RFC 6570 uri-template

# literals: any character but CTL, SP, DQUOTE, "'", "%", "<", ">", "\", "^",
# "`", "{", "|", "}" (so %x21 / %x23-24 / %x26 / %x28-3B / %x3D / %x3F-5B /
# %x5D / %x5F / %x61-7A / %x7E), ucschar, iprivate, or pct-encoded.
_TEMPLATE_LITERAL = (f"(?:[!#$&(-;=?-\\[\\]_a-z~{_UCSCHAR}{_IPRIVATE}]|{_PCT_ENCODED})")
_VARCHAR = f"(?:[A-Za-z0-9_]|{_PCT_ENCODED})"
_VARNAME = f"{_VARCHAR}(?:\\.?{_VARCHAR})*"
_MODIFIER = "(?::[1-9][0-9]{0,3}|\\*)"
_VARSPEC = f"{_VARNAME}{_MODIFIER}?"
_OPERATOR = "[+#./;?&=,!@|]"
_EXPRESSION = f"\\{{{_OPERATOR}?{_VARSPEC}(?:,{_VARSPEC})*\\}}"
_URI_TEMPLATE = f"(?:{_TEMPLATE_LITERAL}|{_EXPRESSION})*"

# ------------------------------------------------------------- RFC 6901 json-pointer

# unescaped = %x00-2E / %x30-7D / %x7F-10FFFF (all but "/" and "~").
_REFERENCE_TOKEN = "(?:[^/~]|~[01])*"
_JSON_POINTER = f"(?:/{_REFERENCE_TOKEN})*"
_NON_NEGATIVE_INTEGER = "(?:0|[1-9][0-9]*)"
_RELATIVE_JSON_POINTER = (f"{_NON_NEGATIVE_INTEGER}(?:[+\\-]{_NON_NEGATIVE_INTEGER})?"
                          f"(?:#|{_JSON_POINTER})")

_HEX = "[0-9a-fA-F]"
_UUID = f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"

FORMAT_PATTERNS = {name: f"^{body}$" for name, body in {
    "date": _DATE,
    "time": _TIME,
    "date-time": f"{_DATE}[Tt]{_TIME}",
    "duration": _DURATION,
    "email": _EMAIL,
    "hostname": _HOSTNAME,
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "uri": _URI["absolute"],
    "uri-reference": _URI["reference"],
    "iri": _IRI["absolute"],
    "iri-reference": _IRI["reference"],
    "uri-template": _URI_TEMPLATE,
    "json-pointer": _JSON_POINTER,
    "relative-json-pointer": _RELATIVE_JSON_POINTER,
    "uuid": _UUID,
}.items()}

def asserted_patterns(schema: dict) -> list[tuple[str, str, bool]]:
    """(keyword, ECMA-262 pattern, ascii_escapes) of a string schema's
    ``pattern`` (and ``MORE_PATTERNS`` of a merged ``allOf``) and asserted ``format``: the regexes its strings must match.
    A value of the wrong type is skipped here; ``string_nodes`` rejects it."""
    found = []
    if isinstance(schema.get("pattern"), str):
        found.append(("pattern", schema["pattern"], True))
    found.extend(("pattern", pattern, True) for pattern in schema.get(MORE_PATTERNS, ()))
    name = schema.get("format")
    if isinstance(name, str) and name in FORMAT_PATTERNS:
        found.append(("format", FORMAT_PATTERNS[name], False))
    return found


NOT_ENFORCED = {
    "idn-hostname": "IDNA2008 (RFC 5890-5893) decides by per-code-point tables and "
                    "context rules (bidi, joiners) that grammask does not carry",
    "idn-email": "its domain is an idn-hostname (IDNA2008 tables, not carried)",
}
"""Known formats not asserted, with the reason (the ``GrammarWarning`` text)."""

GRAMMAR_FORMATS = {
    "regex": "ECMA-262 regular expressions nest groups to any depth (not a regular language)",
}
"""Formats asserted by a context-free grammar instead of a pattern (``regex``:
``regex_format``, which refuses some patterns both dialects accept, as its
docstring lists), with why no pattern can: beside a ``pattern`` or length
bounds, whose intersection with the grammar the translator does not build,
they are not enforced and warn with this text.  Their complement is not
built either (``negatable``)."""

LOOSER = {
    "hostname": "A-labels ('xn--' labels, any case) are not decoded: any letters-digits-"
                "hyphens label is accepted where RFC 5891 requires the Punycode of a valid "
                "IDNA2008 U-label (tables and context rules, not regular in a small DFA)",
}
"""Asserted formats whose pattern accepts strings the format refuses, with
what is not checked (the ``GrammarWarning`` text)."""

STRICTER = {
    "time": "a leap second (second 60) is refused",
    "date-time": "a leap second (second 60) is refused",
}
"""Asserted formats whose pattern refuses strings the format accepts, with
what is refused: exact enough to assert (never looser), but their
complement would accept those strings as failing the format, so a ``not``
of them is not built (``negatable``)."""

PLAIN_SUBSETS = {"email": f"^{_DOT_STRING}@{_LDH_LABEL}(?:\\.{_LDH_LABEL})*$"}
"""Formats with a pattern of a plain subset of their strings (mailboxes
without quoted local parts or address literals: 8 DFA states where the whole
format has about 300), which a length bound too large to count beside the
whole format (past ``Config.max_product_dfa_states``; ``maxLength: 1024``
gives 23,682 states, within it) is counted beside instead
(``string_nodes``): stricter than the format there, never looser, as
``STRICTER`` formats are."""

UNCOUNTED_MAX_LENGTH = {"hostname": HOSTNAME_MAX_LENGTH}
"""Asserted formats with a most-characters limit their pattern does not
count (a hostname's 253 characters with its 63-character labels make a DFA
of 23,812 states, past ``Config.max_dfa_states``): warned unless a
``maxLength`` or ``pattern`` enforced beside the format bounds the string
within it.  A ``maxLength`` at or above the limit is implied by the format
and not counted either (``string_nodes``)."""


def looseness(name: object, bounds) -> str | None:
    """The warning text for what an asserted format ``name`` leaves
    unchecked when its string node enforces each of ``bounds`` (most
    characters; None: no bound), or None if the translation is exact."""
    if not isinstance(name, str):
        return None
    known = [bound for bound in bounds if bound is not None]
    longest = min(known) if known else None
    reasons = [LOOSER[name]] if name in LOOSER else []
    limit = UNCOUNTED_MAX_LENGTH.get(name)
    if limit is not None and (longest is None or longest > limit):
        reasons.append(f"names longer than {limit} characters are accepted (neither the limit "
                       f"nor a larger maxLength beside it is counted; a maxLength of at most "
                       f"{limit} enforces it)")
    return f"format {name!r} looser than specified: {'; '.join(reasons)}" if reasons else None


def negatable(name: object) -> bool:
    """Whether the strings failing format ``name`` are exactly those outside
    its pattern (or none, for a format no draft defines, an annotation):
    False for a value that is not a string and for the formats not
    asserted, asserted by a grammar, looser or stricter than specified
    (``NOT_ENFORCED``, ``GRAMMAR_FORMATS``, ``LOOSER``, ``UNCOUNTED_MAX_LENGTH``,
    ``STRICTER``)."""
    return isinstance(name, str) and not any(
        name in table for table in (NOT_ENFORCED, GRAMMAR_FORMATS, LOOSER, UNCOUNTED_MAX_LENGTH,
                                    STRICTER))
