#!/usr/bin/env python3
"""Corpus check for PyTorch code: port a checkout of a public repository with
`cuport migrate --to TARGET` and check what a porting engineer would.

  (a) every ported .py file byte-compiles (compile(), nothing is run);
  (b) a file that starts with a UTF-8 byte-order mark still starts with it,
      and has no other;
  (c) silent leftovers: CUDA uses left in the output on a line that carries
      no diagnostic: `torch.cuda...`, `torch.version.cuda`,
      `torch.backends.cudnn...`, names containing `nccl`, `.cuda(` calls,
      `.is_cuda`, and CUDA device strings ("cuda", "cuda:0", "cuda:",
      "cuda:{}", "cuda:%d", f"cuda:{rank}"). A device string inside a
      message (print, logging, warnings.warn, raise) is text, as cuport
      treats it, and is counted apart.

Exit status 1 when a file does not compile, loses its byte-order mark, or a
silent leftover is found. The checkout is never modified; nothing from it
is executed.

  python3 tests/corpus/python_check.py --src CHECKOUT --to ascend \\
      --cuport target/release/cuport [--json OUT.json] [-v]
"""
from __future__ import annotations

import argparse
import difflib
import io
import json
import re
import subprocess
import sys
import tempfile
import tokenize
from pathlib import Path

BOM = b"\xef\xbb\xbf"

DEVICE_STRING = re.compile(r"cuda(:(\d+|\{[\w:]*\}|%[disu])?)?")
CUDA_PATHS = ("torch.cuda", "torch.version.cuda", "torch.backends.cudnn")
MESSAGE_CALL = re.compile(
    r"\bprint\(|\blogging\.\w+\(|\.(debug|info|warning|warn|error|critical|exception|log|fatal)\(|\braise\b"
)


def migrate(cuport: str, src: Path, target: str, work: Path) -> tuple[Path, dict]:
    out, report = work / "out", work / "report"
    cmd = [cuport, "migrate", "--to", target, str(src), "--out", str(out), "--report", str(report)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"cuport migrate failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return out, json.loads((report / "report.json").read_text())


def diagnosed_lines(report: dict) -> dict[str, set[int]]:
    return {
        f["path"]: {d["line"] for d in f.get("diagnostics", [])}
        for f in report["files"]
    }


def string_value(token: str) -> str | None:
    """The text of a plain or f-string literal token (None for bytes)."""
    prefix = re.match(r"[A-Za-z]*", token).group(0).lower()
    if "b" in prefix:
        return None
    body = token[len(prefix):]
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    return body[len(quote):-len(quote)] if body.endswith(quote) else None


def fstring_head(tokens: list[tokenize.TokenInfo], i: int) -> str | None:
    """The literal start of an f-string on Python 3.12+ (FSTRING_START ...)."""
    if i + 1 < len(tokens) and tokens[i + 1].type == getattr(tokenize, "FSTRING_MIDDLE", -1):
        return tokens[i + 1].string
    return ""


def leftovers(text: str) -> list[tuple[int, str]]:
    """(line, what) for each CUDA use in the code of one file."""
    found: list[tuple[int, str]] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return found
    names: list[str] = []
    for i, tok in enumerate(tokens):
        line = tok.start[0]
        if tok.type == tokenize.NAME:
            chain_continues = len(names) > 0 and i > 0 and tokens[i - 1].string == "."
            names = names + [tok.string] if chain_continues else [tok.string]
            dotted = ".".join(names)
            if dotted in CUDA_PATHS:
                found.append((line, dotted))
            elif "nccl" in tok.string.lower() and not (i > 0 and tokens[i - 1].string == "as"):
                # (the name an import binds with `as` is the project's own)
                found.append((line, tok.string))
            elif chain_continues and tok.string in ("cuda", "is_cuda") and len(names) > 1 and names[0] != "torch":
                follows = tokens[i + 1].string if i + 1 < len(tokens) else ""
                if tok.string == "is_cuda" or follows == "(":
                    found.append((line, f".{tok.string}"))
            continue
        if tok.type == tokenize.OP and tok.string == ".":
            continue
        names = []
        value = None
        if tok.type == tokenize.STRING:
            value = string_value(tok.string)
        elif tok.type == getattr(tokenize, "FSTRING_START", -1):
            value = fstring_head(tokens, i)
        if value is not None and DEVICE_STRING.fullmatch(value) and value:
            found.append((line, f"device string {value!r}"))
    return found


def check(out: Path, src: Path, report: dict, verbose: bool) -> dict:
    diagnosed = diagnosed_lines(report)
    result = {"files": 0, "compile_errors": [], "bom_lost": [], "silent": [], "diagnosed": 0, "messages": 0}
    for path in sorted(out.rglob("*.py")):
        rel = path.relative_to(out).as_posix()
        original = src / rel
        data = path.read_bytes()
        result["files"] += 1
        try:
            compile(data, rel, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as error:
            if original.exists() and not compiles(original.read_bytes(), rel):
                continue  # did not compile as shipped either
            result["compile_errors"].append(f"{rel}: {error}")
        if original.exists() and original.read_bytes().startswith(BOM):
            if not data.startswith(BOM) or data.count(BOM) != 1:
                result["bom_lost"].append(rel)
        text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
        lines = text.splitlines()
        before = original.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff") if original.exists() else text
        source_line = line_map(before.splitlines(), lines)
        for line, what in leftovers(text):
            code = lines[line - 1] if line - 1 < len(lines) else ""
            if source_line.get(line) in diagnosed.get(rel, set()):
                result["diagnosed"] += 1
            elif what.startswith("device string") and MESSAGE_CALL.search(code):
                result["messages"] += 1
            else:
                result["silent"].append(f"{rel}:{line}: {what}: {code.strip()}")
                if verbose:
                    print(f"silent: {rel}:{line}: {what}: {code.strip()}")
    return result


def line_map(before: list[str], after: list[str]) -> dict[int, int]:
    """Output line -> source line (1-based): diagnostics name source lines,
    and the port inserts lines (imports) and may change others."""
    mapping: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag in ("equal", "replace"):
            for k in range(min(a1 - a0, b1 - b0)):
                mapping[b0 + k + 1] = a0 + k + 1
    return mapping


def compiles(data: bytes, name: str) -> bool:
    try:
        compile(data, name, "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError):
        return False


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--src", required=True, type=Path, help="checkout of the code base (not modified)")
    p.add_argument("--to", default="ascend", help="cuport target (default ascend)")
    p.add_argument("--cuport", required=True, help="cuport binary")
    p.add_argument("--work", type=Path, help="keep the output here (default: a temporary dir)")
    p.add_argument("--json", type=Path, help="write the details as JSON")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or Path(tmp)
        out, report = migrate(a.cuport, a.src, a.to, work)
        result = check(out, a.src, report, a.verbose)
    result.update(src=str(a.src), target=a.to)
    if a.json:
        a.json.write_text(json.dumps(result, indent=2))
    print(
        f"{a.src.name} --to {a.to}: {result['files']} .py files; "
        f"{len(result['compile_errors'])} do not compile (of those that did as shipped); "
        f"{len(result['bom_lost'])} lost their byte-order mark; "
        f"CUDA uses left: {len(result['silent'])} silent, {result['diagnosed']} on diagnosed lines, "
        f"{result['messages']} device words in messages"
    )
    for line in result["compile_errors"] + result["bom_lost"] + result["silent"][:30]:
        print("  " + line)
    return 1 if result["compile_errors"] or result["bom_lost"] or result["silent"] else 0


if __name__ == "__main__":
    sys.exit(main())
