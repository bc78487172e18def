"""Pre-tokenizer regex as a scanner over character classes.

What it computes
    Byte-level BPE tokenizers (GPT-2, cl100k / Llama-3, Qwen2, tekken) first
    split text with ``regex.findall(pattern, text)`` into pre-tokens and run
    BPE inside each.  Where those splits fall depends only on which of the
    pattern's *atoms* (character classes such as ``\\p{L}``, ``[^\\s\\p{L}\\p{N}]``,
    ``\\s``, and literal characters such as ``'`` or case-insensitive ``s``)
    each character belongs to.  ``CharClasses`` partitions all code points by
    their atom memberships; replacing every character by its class's
    representative leaves every match boundary of the pattern unchanged, so the
    scanner runs the *real* pattern (``regex`` module) on short representative
    strings and memoizes the boundaries.

Data layout
    ``class_of``: int16[0x110000] code point -> class id (cached on disk under
    ``cache_dir()`` unless ``GRAMMASK_NO_DISK_CACHE`` is set, keyed by the
    pattern, the ``regex`` release whose Unicode tables decide the classes and
    this module's own bytes (``_table_version``); computing it takes about
    0.5 s); ``representatives``:
    str, one character per class.  ``boundaries(text)`` returns the tuple of
    match end offsets (characters) of ``regex.finditer(pattern, text)``.

Invariants
    Two strings with the same class sequence have the same match boundaries
    (the classes refine every atom).  ``represent`` further forgets the
    case-insensitive letter literals of contraction alternatives (``'s``,
    ``'re``...) except within two characters of a string's start or of a
    trigger literal (``'``): that is the only place they can match in the
    GPT-2 / cl100k / Llama-3 / Qwen2 patterns, and it cuts cl100k's token
    shapes from 26,483 to 2,041.  Tests fuzz ``represent`` against
    ``regex.findall`` on real text.  Surrogates map to their own class and
    never occur in text.

Seed: docs/design.md section 5; Tran-Thien 2024 (docs/references.md).
"""

from __future__ import annotations

import functools
import hashlib
import os

import numpy as np
import regex

from grammask.config import cache_dir, disk_caches_enabled

N_CODE_POINTS = 0x110000


def _bracket_end(pattern: str, start: int) -> int:
    """Index just past the ``]`` closing the bracket expression opened at ``start``."""
    index = start + 1
    if index < len(pattern) and pattern[index] == "^":
        index += 1
    if index < len(pattern) and pattern[index] == "]":
        index += 1
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            if pattern[index - 1] in "pP" and index < len(pattern) and pattern[index] == "{":
                index = pattern.index("}", index) + 1
            continue
        if char == "[":
            index = _bracket_end(pattern, index)
            continue
        if char == "]":
            return index + 1
        index += 1
    raise ValueError(f"unclosed bracket in pre-tokenizer pattern {pattern!r}")


def pattern_atoms(pattern: str) -> list:
    """The character-level atoms of a pre-tokenizer pattern, each as a standalone regex.

    Atoms are bracket expressions, escapes (``\\p{..}``, ``\\s``, ``\\S``,
    ``\\d``, ``\\w``, escaped characters) and literal characters; inside a
    ``(?i:`` group they are taken case-insensitively.  Group syntax,
    quantifiers and anchors are skipped.
    """
    atoms = []
    case_stack = [False]
    index = 0
    while index < len(pattern):
        char = pattern[index]
        insensitive = case_stack[-1]
        prefix = "(?i)" if insensitive else ""
        if char == "(":
            if pattern.startswith("(?i:", index):
                case_stack.append(True)
                index += 4
            elif pattern.startswith(("(?=", "(?!"), index):
                case_stack.append(insensitive)
                index += 3
            elif pattern.startswith(("(?<=", "(?<!"), index):
                case_stack.append(insensitive)
                index += 4
            elif pattern.startswith("(?", index):
                end = index + 2
                while end < len(pattern) and pattern[end] not in ":)":
                    end += 1
                case_stack.append(insensitive or "i" in pattern[index + 2:end])
                index = end + 1
            else:
                case_stack.append(insensitive)
                index += 1
        elif char == ")":
            if len(case_stack) > 1:
                case_stack.pop()
            index += 1
        elif char == "[":
            end = _bracket_end(pattern, index)
            atoms.append(prefix + pattern[index:end])
            index = end
        elif char == "\\":
            end = index + 2
            if pattern[index + 1] in "pP" and end < len(pattern) and pattern[end] == "{":
                end = pattern.index("}", end) + 1
            atoms.append(prefix + pattern[index:end])
            index = end
        elif char == "{":
            index = pattern.index("}", index) + 1
        elif char in "|?*+^$.":
            if char == ".":
                atoms.append(".")
            index += 1
        else:
            atoms.append(prefix + regex.escape(char))
            index += 1
    return sorted(set(atoms))


@functools.lru_cache(maxsize=1)
def _table_version() -> str:
    """What a stored class table depends on besides its pattern: the ``regex``
    release (its Unicode tables: a table written under another one gave
    Llama-3's filter classes that its scanner then contradicted) and this
    module's bytes (the computation)."""
    with open(__file__, "rb") as file:
        source = hashlib.sha256(file.read()).hexdigest()
    return f"v2\0regex {regex.__version__}\0{source}"


class CharClasses:
    """Partition of all code points by membership in a pattern's atoms; see module docstring."""

    def __init__(self, pattern: str):
        self.pattern = pattern
        self.atoms = pattern_atoms(pattern)
        key = hashlib.sha256((_table_version() + "\0" + pattern).encode("utf-8")).hexdigest()[:24]
        path = os.path.join(cache_dir(), f"charclasses-{key}.npz")
        use_disk = disk_caches_enabled()
        loaded = None
        if use_disk and os.path.exists(path):
            try:
                with np.load(path) as data:
                    loaded = (data["class_of"], data["signatures"])
            except (OSError, ValueError, KeyError):
                loaded = None
        if loaded is None or loaded[0].shape != (N_CODE_POINTS,):
            loaded = self._compute()
            if use_disk:
                self._store(path, loaded)
        class_of, signatures = loaded
        self.class_of = class_of
        self.n_classes = int(class_of.max()) + 1
        first = np.full(self.n_classes, -1, dtype=np.int64)
        code_points = np.arange(N_CODE_POINTS)
        is_surrogate = (code_points >= 0xD800) & (code_points < 0xE000)
        valid = code_points[~is_surrogate]
        order = np.unique(class_of[valid], return_index=True)
        first[order[0]] = valid[order[1]]
        self.representatives = "".join(chr(int(c)) if c >= 0 else "\ufffd" for c in first)
        self.surrogate_class = int(class_of[0xD800])
        self._derive_generic_classes(signatures)

    @staticmethod
    def _store(path: str, loaded: tuple) -> None:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            temporary = f"{path}.{os.getpid()}.tmp.npz"
            np.savez(temporary, class_of=loaded[0], signatures=loaded[1])
            os.replace(temporary, path)
        except OSError:
            pass

    def _derive_generic_classes(self, signatures: np.ndarray) -> None:
        """Letter literals (``(?i)[sdmt]``, ``(?i)e``: contractions) only matter right after a
        *trigger* literal (``'``).  ``generic_representatives`` forget them."""
        letter_literal_bits = 0
        trigger_bits = 0
        for bit, atom in enumerate(self.atoms):
            body = atom[4:] if atom.startswith("(?i)") else atom
            if atom.startswith("(?i)") and regex.fullmatch(r"\[[A-Za-z]+\]|[A-Za-z]", body):
                letter_literal_bits |= 1 << bit
            elif not atom.startswith("(?i)"):
                char = body[1:] if body.startswith("\\") and len(body) == 2 else body
                if len(char) == 1 and not char.isalnum() and not char.isspace():
                    trigger_bits |= 1 << bit
        self.trigger_class = np.array([(int(sig) & trigger_bits) != 0 and sig >= 0 for sig in signatures])
        by_signature = {int(sig): index for index, sig in enumerate(signatures)}
        generic = []
        for index, sig in enumerate(signatures):
            base = int(sig) & ~letter_literal_bits if sig >= 0 else int(sig)
            generic.append(self.representatives[by_signature.get(base, index)])
        self.generic_representatives = "".join(generic)
        self.literal_window = 2 if letter_literal_bits else 0

    def _compute(self):
        code_points = np.arange(N_CODE_POINTS, dtype=np.uint32)
        valid = code_points[(code_points < 0xD800) | (code_points >= 0xE000)]
        text = valid.astype("<u4").tobytes().decode("utf-32-le")
        signature = np.zeros(N_CODE_POINTS, dtype=np.int64)
        signature[0xD800:0xE000] = -1
        for bit, atom in enumerate(self.atoms):
            member = np.zeros(len(text), dtype=bool)
            for match in regex.finditer(f"(?:{atom})+", text):
                member[match.start():match.end()] = True
            signature[valid] |= member.astype(np.int64) << bit
        signatures, inverse = np.unique(signature, return_inverse=True)
        return inverse.reshape(-1).astype(np.int16), signatures

    def represent(self, text: str) -> str:
        """``text`` with each character replaced by its class representative.

        Letter-literal classes are kept only within ``literal_window``
        characters of the start or of a trigger character; elsewhere they are
        replaced by their generic class (they cannot start a literal there).
        """
        class_of = self.class_of
        classes = [class_of[ord(char)] for char in text]
        window = self.literal_window
        out = []
        last_trigger = -window - 1
        for index, class_id in enumerate(classes):
            if index < window or index - last_trigger <= window:
                out.append(self.representatives[class_id])
            else:
                out.append(self.generic_representatives[class_id])
            if self.trigger_class[class_id]:
                last_trigger = index
        return "".join(out)

    def represent_many(self, texts: list) -> list:
        """``[represent(text) for text in texts]``, vectorized over the concatenation of the texts."""
        if not texts:
            return []
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        offsets = np.concatenate(([0], np.cumsum(lengths)))
        code_points = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
        classes = self.class_of[code_points]
        positions = np.arange(len(code_points))
        starts = np.repeat(offsets[:-1], lengths)
        window = self.literal_window
        specific = positions - starts < window
        if window:
            triggers = np.where(self.trigger_class[classes], positions, -1)
            last_trigger = np.concatenate(([-1], np.maximum.accumulate(triggers)[:-1]))
            specific |= (last_trigger >= starts) & (positions - last_trigger <= window)
        specific_points = np.frombuffer(self.representatives.encode("utf-32-le"), dtype=np.uint32)
        generic_points = np.frombuffer(self.generic_representatives.encode("utf-32-le"), dtype=np.uint32)
        out = np.where(specific, specific_points[classes], generic_points[classes]).astype("<u4")
        joined = out.tobytes().decode("utf-32-le")
        bounds = offsets.tolist()
        return [joined[bounds[index]:bounds[index + 1]] for index in range(len(texts))]

    @functools.lru_cache(maxsize=4096)
    def completion_classes(self, lead: bytes) -> tuple:
        """Class representatives of the characters whose UTF-8 starts with ``lead`` (1-3 bytes)."""
        span = utf8_completion_range(lead)
        if span is None:
            return ()
        classes = np.unique(self.class_of[span[0]:span[1] + 1])
        classes = classes[classes != self.surrogate_class]
        return tuple(self.representatives[int(c)] for c in classes)


_UTF8_MIN = {2: 0x80, 3: 0x800, 4: 0x10000}
_UTF8_MAX = {2: 0x7FF, 3: 0xFFFF, 4: 0x10FFFF}


def utf8_completion_range(lead: bytes):
    """(lowest, highest) code point whose UTF-8 encoding starts with the incomplete ``lead``, or None."""
    first = lead[0]
    if first < 0xC2 or first > 0xF4:
        return None
    length = 2 if first < 0xE0 else 3 if first < 0xF0 else 4
    if len(lead) >= length or any(not 0x80 <= byte <= 0xBF for byte in lead[1:]):
        return None
    value = first & (0x7F >> length)
    for byte in lead[1:]:
        value = (value << 6) | (byte & 0x3F)
    missing_bits = 6 * (length - len(lead))
    low = max(value << missing_bits, _UTF8_MIN[length])
    high = min((value << missing_bits) | ((1 << missing_bits) - 1), _UTF8_MAX[length])
    return (low, high) if low <= high else None


def is_restartable(pattern: str) -> bool:
    """Whether matching at an offset depends only on the text from there on: no lookbehind, no
    word-boundary or start anchors (``^`` outside a bracket's negation, ``\\A``, ``\\G``, ``\\b``,
    ``\\B``).  Then the matches of ``finditer`` after a match end are those of the rest alone."""
    if "(?<=" in pattern or "(?<!" in pattern:
        return False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            if pattern[index + 1:index + 2] in ("A", "G", "b", "B"):
                return False
            index += 2
            continue
        if char == "[":
            index = _bracket_end(pattern, index)
            continue
        if char == "^" or (char == "(" and pattern.startswith("(?m", index)):
            return False
        index += 1
    return True


class Scanner:
    """Memoized match boundaries of a pre-tokenizer pattern on representative strings."""

    def __init__(self, pattern: str):
        self.pattern = pattern
        self.compiled = regex.compile(pattern)
        self.classes = CharClasses(pattern)

    @property
    def restartable(self) -> bool:
        """``is_restartable(self.pattern)``, computed once (also for scanners pickled before it existed)."""
        found = self.__dict__.get("_restartable")
        if found is None:
            found = self._restartable = is_restartable(self.pattern)
        return found

    @functools.lru_cache(maxsize=1 << 14)
    def first_end(self, text: str):
        """End offset of the pattern's first match over ``text`` (the first boundary), None if none."""
        match = self.compiled.search(text)
        return match.end() if match is not None else None

    @functools.lru_cache(maxsize=1 << 14)
    def boundaries(self, text: str) -> tuple:
        """End offsets of the pattern's consecutive matches over ``text``
        (characters): ``boundaries_until`` to the end, memoized."""
        return tuple(self.boundaries_until(text, len(text) + 1))

    def boundaries_until(self, text: str, limit: int, allowed=None) -> list:
        """``boundaries(text)`` up to the first one at or past ``limit``, or
        the first one below it not in the set ``allowed`` (given), included.

        A caller that only needs the boundaries before some offset, all at
        allowed offsets (the canonical filter's feasibility check: before the
        end of its region, at token cuts), scans no further.  For a
        restartable pattern each match is a ``search`` from the previous end
        (the same match as on the rest alone), one call per boundary in a
        plain loop (the filter's hot path: no generator); else one
        ``finditer`` pass."""
        ends: list = []
        if not self.restartable:
            for end in self.boundaries_by_finditer(text):
                ends.append(end)
                if end >= limit or (allowed is not None and end not in allowed):
                    break
            return ends
        search = self.compiled.search
        position, n_text = 0, len(text)
        while position < n_text:
            match = search(text, position)
            if match is None:
                break
            end = match.end()
            if end == position:
                for match in self.compiled.finditer(text, position):
                    end = match.end()
                    ends.append(end)
                    if end >= limit or (allowed is not None and end not in allowed):
                        break
                break
            ends.append(end)
            if end >= limit or (allowed is not None and end not in allowed):
                break
            position = end
        return ends

    def boundaries_by_finditer(self, text: str) -> tuple:
        return tuple(match.end() for match in self.compiled.finditer(text))
