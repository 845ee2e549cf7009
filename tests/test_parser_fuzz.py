"""Mutation fuzzing of the parser: broken programs give a located diagnostic, never a
crash.

The sample programs are mutated (tokens deleted, duplicated or swapped; characters
replaced; bytes flipped) with a fixed seed. Every mutant must either parse to an
IRModule or raise TIRSyntaxError / TIRTypeError: any other exception is a bug.
"""

from __future__ import annotations

import os
import random
import re
import time
from pathlib import Path

import pytest

from tilelang.errors import TIRSyntaxError, TIRTypeError
from tilelang.ir import IRModule
from tilelang.parser import parse_bytes

SAMPLES = sorted((Path(__file__).parent.parent / "samples").glob("*.tir"))
#: TILELANG_FUZZ_SCALE=20 for release checks (README, "Fuzzing"): 20x the mutants
SCALE = int(os.environ.get("TILELANG_FUZZ_SCALE", "1"))
MUTATIONS = 5_000 * SCALE
SEED = 20_241_121 + SCALE - 1
#: a mutant whose parse takes this long did unbounded work (a huge literal evaluated,
#: a blow-up): a correctness bug, not a performance figure, so the bound is generous
#: enough for a loaded machine (a sample parses in milliseconds)
HANG_S = 10.0

_TOKEN = re.compile(r"\s+|\w+|\"[^\"\n]*\"|\*\*|//|<=|>=|==|!=|.", re.DOTALL)
_ODD_CHARACTERS = [":", "(", ")", "[", "]", ",", "=", "\t", "\n", "    ", "#", '"', "\\", "é", "\0"]
# literal arithmetic that must stay bounded (a located error, never a hang or gigabytes)
_HUGE_LITERALS = [
    "2 ** 10 ** 10", "1 << 100000000", "9" * 5000, "(1 << 255) * (1 << 255)", "2 ** 64",
    "-(2 ** 63)", "0x" + "f" * 40, "2.0 ** 100000", "T.int8(200)", "[]", "True[0]",
]  # fmt: skip


def tokens_of(text: str) -> list[str]:
    return _TOKEN.findall(text)


def mutate(rng: random.Random, text: str) -> bytes:
    """One random mutation of ``text``."""
    tokens = tokens_of(text)
    kind = rng.randrange(6)
    i = rng.randrange(len(tokens))
    if kind == 5:  # a number becomes a huge literal expression
        numbers = [k for k, token in enumerate(tokens) if token.isdigit()] or [i]
        tokens[rng.choice(numbers)] = rng.choice(_HUGE_LITERALS)
        return "".join(tokens).encode("utf-8")
    if kind == 0:  # delete a token
        del tokens[i]
    elif kind == 1:  # duplicate a token
        tokens.insert(i, tokens[i])
    elif kind == 2:  # swap two tokens
        j = rng.randrange(len(tokens))
        tokens[i], tokens[j] = tokens[j], tokens[i]
    elif kind == 3:  # replace a token by an odd character
        tokens[i] = rng.choice(_ODD_CHARACTERS)
    else:  # flip a byte (may break UTF-8)
        data = bytearray("".join(tokens).encode("utf-8"))
        position = rng.randrange(len(data))
        data[position] ^= 1 << rng.randrange(8)
        return bytes(data)
    return "".join(tokens).encode("utf-8")


def test_mutants_parse_or_fail_with_a_diagnostic():
    rng = random.Random(SEED)
    texts = [path.read_text() for path in SAMPLES]
    outcomes = {"parsed": 0, "diagnostic": 0}
    for number in range(MUTATIONS):
        mutant = mutate(rng, rng.choice(texts))
        start = time.perf_counter()
        try:
            result = parse_bytes(mutant, "mutant.tir")
        except (TIRSyntaxError, TIRTypeError) as exc:
            rendered = str(exc)
            assert rendered.startswith("error: ") and "Traceback" not in rendered
            assert " --> mutant.tir:" in rendered, f"no location:\n{rendered}"
            outcomes["diagnostic"] += 1
        except Exception as exc:  # noqa: BLE001 - any other exception is the bug we hunt
            pytest.fail(
                f"mutant {number} raised {type(exc).__name__}: {exc}\n"
                f"--- mutant ---\n{mutant.decode('utf-8', 'replace')}"
            )
        else:
            assert isinstance(result, IRModule)
            outcomes["parsed"] += 1
        elapsed = time.perf_counter() - start
        assert elapsed < HANG_S, f"mutant {number} took {elapsed:.1f} s to reject or parse"
    assert sum(outcomes.values()) == MUTATIONS
    # both outcomes occur: the mutations are neither all harmless nor all fatal
    assert outcomes["parsed"] > 0 and outcomes["diagnostic"] > MUTATIONS // 2
