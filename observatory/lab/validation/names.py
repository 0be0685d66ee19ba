"""Name formats of ``k8s.io/apimachinery/pkg/util/validation`` (``validation.go``, the label-key and label-value
checks of ``pkg/api/validate/content/kube.go``) and the name functions of ``pkg/api/validation``.

Each ``is_*`` function returns upstream's list of messages (empty when valid). Lengths are in bytes of UTF-8, as Go's
``len`` counts them, so ``é`` is 2 and an emoji 4. The texts, for v1.34:

* ``IsDNS1123Subdomain``: ``must be no more than 253 characters``; ``a lowercase RFC 1123 subdomain must consist of
  lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g.
  'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')``;
* ``IsDNS1123Label``: ``must be no more than 63 characters``; ``must not contain dots`` (a valid subdomain) or ``a
  lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an
  alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is
  '[a-z0-9]([-a-z0-9]*[a-z0-9])?')``;
* ``IsQualifiedName`` (label keys, annotation keys, finalizers, gates): ``prefix part ...``/``name part must be
  non-empty``, ``name part must be no more than 63 characters``, ``name part must consist of alphanumeric characters,
  '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or
  '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')``, and for more than one ``/``
  ``a valid label key must consist of ... with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')``;
* ``IsValidLabelValue``: ``must be no more than 63 characters``; ``a valid label must be an empty string or consist of
  alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or
  'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')``.

``RegexError`` joins its examples with ``" or "`` after a ``", "``, hence the double spaces. Go's regexp ``$`` matches
only at the very end, so a trailing newline is invalid here too (:func:`re.fullmatch`).
"""

from __future__ import annotations

import re

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
              "character")
_LABEL_RE, _SUBDOMAIN_RE = re.compile(_LABEL_FMT), re.compile(_SUBDOMAIN_FMT)
_QNAME_RE, _VALUE_RE = re.compile(_QNAME_FMT), re.compile(_VALUE_FMT)


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``RegexError``."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    return msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    """``MaxLenError`` (v1.34 wording; later releases say ``bytes``)."""
    return f"must be no more than {length} characters"


def blen(value: str) -> int:
    """Go's ``len``: bytes of UTF-8 (lone surrogates count as the 3 bytes Go's replacement would take)."""
    return len(value.encode("utf-8", "surrogatepass"))


SUBDOMAIN_MSG = regex_error("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                            "or '.', and must start and end with an alphanumeric character", _SUBDOMAIN_FMT,
                            "example.com")
LABEL_MSG = regex_error("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                        "must start and end with an alphanumeric character", _LABEL_FMT, "my-name", "123-abc")


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = [max_len_error(253)] if blen(value) > 253 else []
    if not _SUBDOMAIN_RE.fullmatch(value):
        errs.append(SUBDOMAIN_MSG)
    return errs


def is_dns1123_label(value: str) -> list[str]:
    errs = [max_len_error(63)] if blen(value) > 63 else []
    if not _LABEL_RE.fullmatch(value):
        errs.append("must not contain dots" if _SUBDOMAIN_RE.fullmatch(value) else LABEL_MSG)
    return errs


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` / ``content.IsLabelKey``."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return ["a valid label key " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if len(parts) == 2:
        if not parts[0]:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + msg for msg in is_dns1123_subdomain(parts[0])]
    name = parts[-1]
    if not name:
        errs.append("name part must be non-empty")
    elif blen(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _QNAME_RE.fullmatch(name):
        errs.append("name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_valid_label_value(value: str) -> list[str]:
    errs = [max_len_error(63)] if blen(value) > 63 else []
    if not _VALUE_RE.fullmatch(value):
        errs.append(regex_error("a valid label must be an empty string or " + _QNAME_MSG[len("must "):], _VALUE_FMT,
                                "MyValue", "my_value", "12345"))
    return errs


def _mask_trailing_dash(name: str) -> str:
    """``maskTrailingDash``: a generateName prefix may end in ``-``."""
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def name_is_dns_subdomain(name: str, prefix: bool = False) -> list[str]:
    """``NameIsDNSSubdomain``: pods, nodes, PriorityClasses, service accounts, most kinds."""
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool = False) -> list[str]:
    """``NameIsDNSLabel``: namespaces (``ValidateNamespaceName``)."""
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def path_segment_name(name: str, prefix: bool = False) -> list[str]:
    """``path.ValidatePathSegmentName``, the name check every kind gets (``rest.BeforeCreate``/``BeforeUpdate``)."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in "/%" if c in name]
