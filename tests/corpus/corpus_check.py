#!/usr/bin/env python3
"""Compile a real CUDA code base before and after `cuport migrate`, and explain every regression.

For a checkout of a real code base (cuda-samples, llm.c, ...), this script

  (a) enumerates the translation units: `.cu` files that no other file `#include`s
      (or the units given with --unit / --units-file / --add-unit);
  (b) compiles every unit as shipped with nvcc (`-c -arch=sm_80 -std=c++17`, include dirs:
      the unit's directory, --tree-include dirs of the tree, --cuda-include dirs);
  (c) runs `cuport migrate --to hip SRC --out OUT --format json` (mode hip) or
      `cuport migrate --dual --to ascend,hip SRC --out OUT --format json` (mode dual);
      with --translator hipify-perl it runs ROCm's hipify-perl over a copy instead;
  (d) compiles every unit of OUT: mode hip with `hipcc -fsyntax-only -x hip --offload-arch=gfx90a`;
      mode dual with nvcc, once with -DCUPORT_BACKEND_CUDA and once without (and, with
      --dual-hip, with hipcc -DCUPORT_BACKEND_HIP);
  (e) classifies every unit that compiled before and fails after:
        missing-header: NAME  the first error is a missing header that is not present on this
                              system (a ROCm library Debian does not package, ...);
        flagged               the line of the first error carries a cuport diagnostic;
        unexplained           anything else (including a CUDA header left in HIP output);
  (f) prints a table and writes per-unit details (TSV and JSON), plus the "silent leftover"
      check: every CUDA name that `cuport rules list --to TARGET` maps to something else and
      that is still in the output, outside comments and strings, on a line with no diagnostic.

Python 3.11, standard library only. See README.md beside this file.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import fnmatch
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, asdict
from pathlib import Path

C_FAMILY = {".cu", ".cuh", ".h", ".hh", ".hpp", ".hxx", ".c", ".cc", ".cpp", ".cxx", ".inl", ".inc", ".tcc", ".ipp", ".hip"}
INCLUDE_RE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)
SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules"}

# --- compiler output parsing -------------------------------------------------------------

# gcc / clang / hipcc:  file:line:col: error: msg   (col optional)
GNU_ERR = re.compile(r"^(?P<file>[^\s:][^:\n]*?):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<sev>fatal error|error):\s*(?P<msg>.*)$")
# nvcc front end (EDG):  file(line): error: msg  /  file(line): catastrophic error: msg
EDG_ERR = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\):\s*(?P<sev>catastrophic error|error)(?:\s*#[\w-]+)?:\s*(?P<msg>.*)$")
# errors without a location: "nvcc fatal   : ...", "ptxas error   : ...", "clang: error: ..."
TOOL_ERR = re.compile(r"^(?:\S+\s+)?(?P<sev>fatal|error)\s*:\s*(?P<msg>.*)$|^\S*(?:nvcc|ptxas|clang|hipcc|cicc|nvlink|ld)\S*:?\s+(?P<sev2>fatal|error)\s*:\s*(?P<msg2>.*)$")
MISSING_GNU = re.compile(r"fatal error:\s*'?(?P<h>[^':]+?)'?(?::\s*No such file or directory| file not found)")
MISSING_EDG = re.compile(r'cannot open source file\s+"(?P<h>[^"]+)"')


@dataclass
class CompileError:
    file: str | None  # as printed by the compiler
    line: int | None
    message: str
    text: str  # the whole output line
    # Where a template the error sits in was instantiated from (clang's
    # "note: in instantiation of ... requested here"), innermost first: an
    # error in a library header (rocPRIM's static_assert on the block size)
    # is the user's code's doing there.
    instantiated_at: list[tuple[str, int, str]] = field(default_factory=list)


@dataclass
class CompileResult:
    rc: int
    seconds: float
    first_error: CompileError | None
    errors: list[CompileError]
    output_tail: str
    command: list[str]

    @property
    def ok(self) -> bool:
        return self.rc == 0

    def first_error_text(self) -> str:
        if self.rc == 0:
            return ""
        if self.first_error is not None:
            return self.first_error.text.strip()
        lines = [l for l in self.output_tail.splitlines() if l.strip()]
        return lines[0].strip() if lines else f"exit status {self.rc}"


INSTANTIATION_NOTE = re.compile(r"^(?P<file>[^\s:][^:\n]*?):(?P<line>\d+):(?:\d+:)?\s*note:\s*(?:in instantiation of|required from)")


def parse_errors(output: str) -> list[CompileError]:
    errors: list[CompileError] = []
    for raw in output.splitlines():
        line = raw.rstrip()
        m = INSTANTIATION_NOTE.match(line)
        if m and errors:
            errors[-1].instantiated_at.append((m.group("file"), int(m.group("line")), line))
            continue
        m = GNU_ERR.match(line)
        if m and not m.group("file").startswith(("clang", "nvcc", "hipcc")):
            errors.append(CompileError(m.group("file"), int(m.group("line")), m.group("msg"), line))
            continue
        m = EDG_ERR.match(line)
        if m:
            errors.append(CompileError(m.group("file"), int(m.group("line")), m.group("msg"), line))
            continue
        m = TOOL_ERR.match(line)
        if m:
            errors.append(CompileError(None, None, (m.group("msg") or m.group("msg2") or "").strip(), line))
    return errors


def missing_header(err: CompileError) -> str | None:
    for rx in (MISSING_GNU, MISSING_EDG):
        m = rx.search(err.text)
        if m:
            return m.group("h").strip()
    return None


_active: set[subprocess.Popen] = set()
_active_lock = threading.Lock()


def run_cmd(cmd: list[str], cwd: Path, timeout: float, env: dict | None = None) -> tuple[int, str, float]:
    """Run a command in its own process group; on timeout kill the whole group. rc 124 = timeout."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, env=env)
    except OSError as e:
        return 127, f"cannot run {cmd[0]}: {e}", 0.0
    with _active_lock:
        _active.add(proc)
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = proc.communicate()
        out = (out or b"") + f"\n[corpus_check] timeout after {timeout:.0f} s\n".encode()
        rc = 124
    finally:
        with _active_lock:
            _active.discard(proc)
    return rc, out.decode("utf-8", "replace"), time.monotonic() - start


def kill_all() -> None:
    with _active_lock:
        for p in list(_active):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def compile_unit(cmd: list[str], cwd: Path, timeout: float, env: dict | None = None) -> CompileResult:
    rc, out, secs = run_cmd(cmd, cwd, timeout, env)
    errors = parse_errors(out) if rc != 0 else []
    if rc == 124:
        errors = [CompileError(None, None, "timeout", f"timeout after {timeout:.0f} s")]
    first = errors[0] if errors else None
    tail = out[-4000:]
    return CompileResult(rc, round(secs, 2), first, errors, tail, cmd)


# --- translation units --------------------------------------------------------------------

def walk_files(root: Path) -> list[Path]:
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for f in sorted(filenames):
            files.append(Path(dirpath) / f)
    return files


def enumerate_units(root: Path, under: list[str], ext: tuple[str, ...] = (".cu",)) -> tuple[list[str], dict[str, list[str]]]:
    """`.cu` files under root (or root/UNDER...) that no other file of the tree #includes.

    An `#include "x"` is resolved against the including file's directory first, then against
    every file of the tree whose path ends with x (the include path used by the build is not
    known here). Returns (units, {excluded unit: [includers]}).
    """
    files = [p for p in walk_files(root) if p.suffix.lower() in C_FAMILY]
    by_tail: dict[str, list[Path]] = {}
    for p in files:
        by_tail.setdefault(p.name, []).append(p)
    cand = [p for p in files if p.suffix in ext]
    if under:
        bases = [(root / u).resolve() for u in under]
        cand = [p for p in cand if any(str(p.resolve()).startswith(str(b) + os.sep) or p.resolve() == b for b in bases)]
    cand_set = {p.resolve() for p in cand}
    included_by: dict[Path, list[Path]] = {}
    for p in files:
        try:
            data = p.read_bytes()
        except OSError:
            continue
        if b"include" not in data:
            continue
        for m in INCLUDE_RE.finditer(data):
            inc = m.group(1).decode("utf-8", "replace").strip()
            if not inc.endswith(ext):
                continue
            targets = []
            local = (p.parent / inc).resolve()
            if local in cand_set:
                targets = [local]
            else:
                norm = os.path.normpath(inc).lstrip("./")
                for q in by_tail.get(Path(inc).name, []):
                    if str(q.resolve()).endswith(os.sep + norm) or str(q.resolve()) == norm:
                        targets.append(q.resolve())
            for t in targets:
                if t != p.resolve():
                    included_by.setdefault(t, []).append(p)
    units, excluded = [], {}
    for p in cand:
        rel = str(p.relative_to(root))
        if p.resolve() in included_by:
            excluded[rel] = sorted(str(q.relative_to(root)) for q in included_by[p.resolve()])
        else:
            units.append(rel)
    return sorted(units), excluded


# --- cuport JSON: diagnostics mapped onto output lines -----------------------------------------

def line_starts(data: bytes) -> list[int]:
    starts = [0]
    i = data.find(b"\n")
    while i != -1:
        starts.append(i + 1)
        i = data.find(b"\n", i + 1)
    return starts


def offset_to_line(starts: list[int], off: int) -> int:
    import bisect
    return bisect.bisect_right(starts, off)  # 1-based


class FileMap:
    """Maps byte offsets of an original file onto its cuport output through the applied edits."""

    def __init__(self, original: bytes, output: bytes, edits: list[dict]):
        self.edits = sorted(((*span(e), e["replacement"].encode("utf-8")) for e in edits),
                            key=lambda t: (t[0], t[1]))
        self.out_starts = line_starts(output)
        self.exact = self._rebuild(original) == output
        self.orig_starts = line_starts(original)
        self._line_map = None
        if not self.exact:
            self._line_map = self._difflib_map(original, output)

    def _rebuild(self, original: bytes) -> bytes:
        parts, cur = [], 0
        for s, e, r in self.edits:
            if s < cur:
                return b""  # overlapping: cannot rebuild
            parts.append(original[cur:s])
            parts.append(r)
            cur = e
        parts.append(original[cur:])
        return b"".join(parts)

    @staticmethod
    def _difflib_map(original: bytes, output: bytes) -> dict[int, int]:
        import difflib
        a = original.split(b"\n")
        b = output.split(b"\n")
        sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
        m: dict[int, int] = {}
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            for k in range(i2 - i1):
                m[i1 + k + 1] = min(j1 + k, max(j2 - 1, j1)) + 1
        return m

    def out_offset(self, off: int) -> int:
        delta = 0
        for s, e, r in self.edits:
            if e <= off and not (s == e == off):
                delta += len(r) - (e - s)
            elif s <= off < e:
                return s + delta
            elif s > off or (s == e == off):
                break
        return off + delta

    def out_lines(self, diag: dict) -> set[int]:
        if self.exact:
            start, end = span(diag)
            s = offset_to_line(self.out_starts, self.out_offset(start))
            e = offset_to_line(self.out_starts, self.out_offset(max(start, end - 1)))
            return set(range(s, max(s, e) + 1))
        line = self._line_map.get(diag["line"]) if self._line_map else None
        return {line} if line else set()


@dataclass
class Migration:
    ok: bool
    seconds: float
    message: str
    diag_lines: dict[str, set[int]] = field(default_factory=dict)  # output relpath -> lines with a diagnostic
    diag_codes: dict[str, dict[int, list[str]]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    generated: list[str] = field(default_factory=list)
    totals: dict = field(default_factory=dict)
    inexact_maps: int = 0


def span(x: dict) -> tuple[int, int]:
    """Byte range of an edit or diagnostic: `start`/`end` (cuport-report) or `range` (older)."""
    r = x.get("range") or x
    return int(r["start"]), int(r["end"])


def load_migration(doc: dict, src: Path, out: Path) -> Migration:
    mig = Migration(True, 0.0, "")
    mig.totals = doc.get("totals", {})
    mig.generated = list(doc.get("generated", []))
    for f in doc.get("files", []):
        rel = f["path"]
        mig.files.append(rel)
        diags = f.get("diagnostics") or []
        if not diags:
            continue
        try:
            original = (src / rel).read_bytes()
            output = (out / rel).read_bytes() if (out / rel).exists() else original
        except OSError:
            continue
        fmap = FileMap(original, output, f.get("edits") or [])
        if not fmap.exact:
            mig.inexact_maps += 1
        lines: set[int] = set()
        codes: dict[int, list[str]] = {}
        for d in diags:
            for ln in fmap.out_lines(d):
                lines.add(ln)
                codes.setdefault(ln, []).append(f"{d.get('code')}:{d.get('cuda_name')}")
        mig.diag_lines[rel] = lines
        mig.diag_codes[rel] = codes
    return mig


# --- header presence -------------------------------------------------------------------------

SYSTEM_INCLUDE_GLOBS = [
    "/usr/include", "/usr/local/include", "/usr/include/x86_64-linux-gnu",
    "/usr/lib/llvm-*/lib/clang/*/include", "/usr/lib/clang/*/include",
    "/usr/lib/gcc/x86_64-linux-gnu/*/include", "/usr/include/c++/*", "/usr/include/x86_64-linux-gnu/c++/*",
    "/opt/rocm*/include", "/usr/include/hip", "/usr/include/rocm*",
]


class HeaderIndex:
    """Whether a header NAME exists on this system: under a system or given include dir
    (NAME joined to it), or anywhere under /usr/include and /opt/rocm* (path suffix)."""

    def __init__(self, extra_dirs: list[str]):
        dirs = []
        for g in SYSTEM_INCLUDE_GLOBS:
            dirs.extend(sorted(glob.glob(g)))
        self.dirs = [d for d in dict.fromkeys(dirs + list(extra_dirs)) if os.path.isdir(d)]
        self._suffix_index: set[str] | None = None
        self._lock = threading.Lock()

    def _build(self) -> set[str]:
        idx: set[str] = set()
        for root in ["/usr/include"] + sorted(glob.glob("/opt/rocm*")):
            for dirpath, _, filenames in os.walk(root):
                for f in filenames:
                    idx.add(os.path.join(dirpath, f))
        return idx

    def present(self, name: str, more_dirs: list[str] = (), compiler: str = "") -> str | None:
        """Path of NAME in a dir this compiler searches (the other compiler's private dirs are
        left out: clang does not search gcc's, gcc not clang's), or by path suffix anywhere under
        /usr/include and /opt/rocm*; None when absent."""
        other = {"hipcc": ("/usr/lib/gcc/",), "nvcc": ("/usr/lib/llvm-", "/usr/lib/clang/")}.get(compiler, ())
        for d in list(more_dirs) + self.dirs:
            if other and d.startswith(other):
                continue
            p = os.path.join(d, name)
            if os.path.isfile(p):
                return p
        with self._lock:
            if self._suffix_index is None:
                self._suffix_index = self._build()
        tail = "/" + os.path.normpath(name).lstrip("./")
        for p in self._suffix_index:
            if p.endswith(tail):
                return p
        return None

    def elsewhere(self, name: str) -> str | None:
        """Path of NAME in any known dir, the other compiler's private dirs included."""
        return self.present(name)


# --- rules: CUDA names for the leftover check ----------------------------------------------------

IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
HEADER_RE = re.compile(r"^[A-Za-z0-9_./-]+\.(h|hpp|cuh|hxx|inl)$")


def rules_names(cuport: str, targets: list[str], skip_libraries: set[str], timeout: float,
                extra: list[str] = ()) -> tuple[set[str], set[str], dict[str, str], set[str]]:
    """(identifiers, headers, name->library, exact headers): names that `cuport rules list --to T`
    maps to a different name (status other than `exact`) for every T in targets; and the header
    names the tables keep as they are."""
    idents: set[str] = set()
    headers: set[str] = set()
    exact_headers: set[str] = set()
    libs: dict[str, str] = {}
    for t in targets:
        rc, out, _ = run_cmd([cuport, "rules", "list", "--to", t] + list(extra), Path.cwd(), timeout)
        if rc != 0:
            raise SystemExit(f"corpus_check: `{cuport} rules list --to {t}` failed (exit {rc}):\n{out[-2000:]}")
        for line in out.splitlines():
            cols = line.split("\t")
            if len(cols) < 5:
                continue
            _, lib, status, name, target_name = cols[:5]
            if status == "exact" or name == target_name:
                if HEADER_RE.match(name):
                    exact_headers.add(name)
                continue
            if lib in skip_libraries:
                continue
            if IDENT_RE.match(name):
                idents.add(name)
                libs[name] = lib
            elif HEADER_RE.match(name):
                headers.add(name)
                libs[name] = lib
    return idents, headers, libs, exact_headers


def strip_comments_strings(text: str) -> str:
    """Blanks C/C++ comments, string and char literals (keeps newlines, so lines stay)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j == -1 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j == -1 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == '"' or c == "'":
            if c == '"' and i > 0 and text[i - 1] == "R":  # raw string R"delim( ... )delim"
                k = text.find("(", i)
                delim = text[i + 1:k] if k != -1 else ""
                end = text.find(")" + delim + '"', k) if k != -1 else -1
                j = n if end == -1 else end + len(delim) + 2
            else:
                j = i + 1
                while j < n and text[j] != c and text[j] != "\n":
                    j += 2 if text[j] == "\\" else 1
                j = min(j + 1, n)
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ProjectDefinitions:
    """Names the original tree defines itself (macro, typedef, struct/enum/class/union, enumerator,
    function definition): such names are the project's own, not CUDA leftovers. One pass over the
    tree's C-family files (comments and strings blanked)."""

    PATTERNS = [
        r"#[ \t]*define[ \t]+(\w+)",
        r"\}\s*(\w+)\s*;",                                                   # typedef struct/enum {...} NAME;
        r"\btypedef\b[^;{}]*?\(\s*(?:\w+\s+)?\*\s*(\w+)\s*\)",                # typedef R (API *NAME)(...)
        r"\btypedef\b[^;{}()]*\b(\w+)\s*(?:\[[^\]]*\]\s*)?;",                    # typedef T NAME;
        r"\b(?:struct|class|enum|union)\s+(?:\w+\s+)?(\w+)\s*(?:final\s*)?[{:]",  # struct NAME {
        r"^[ \t]*(\w+)[ \t]*(?:=[^,\n]*)?,[ \t]*$",                                # enumerator on its own line
        r"(?:^|[\s*&:])(\w+)\s*\((?:[^;{}()]|\([^;{}()]*\))*\)\s*(?:const\s*)?(?:noexcept\s*)?\{",  # function definition
    ]

    # `TYPE NAME = ...;` / `TYPE NAME;`: a variable of the project's (cuda-samples'
    # `cublasStatus_t cublasStatus;`), unless TYPE is a keyword that starts an
    # expression (`return cudaSuccess;` uses a name).
    VARIABLE = re.compile(r"\b([A-Za-z_]\w*)[ \t]+(\w+)[ \t]*(?:=(?!=)|;)")
    NOT_A_TYPE = {"return", "case", "else", "do", "throw", "goto", "delete", "new", "sizeof", "co_return", "co_yield"}

    def __init__(self, src: Path):
        self.names: set[str] = set()
        rxs = [re.compile(p, re.M) for p in self.PATTERNS]
        for p in walk_files(src):
            if p.suffix.lower() not in C_FAMILY:
                continue
            try:
                text = strip_comments_strings(p.read_text("utf-8", "replace"))
            except OSError:
                continue
            for rx in rxs:
                self.names.update(m.group(1) for m in rx.finditer(text))
            self.names.update(m.group(2) for m in self.VARIABLE.finditer(text)
                              if m.group(1) not in self.NOT_A_TYPE)

    def defines(self, name: str) -> bool:
        return name in self.names


def find_leftovers(out_root: Path, files: list[str], skip: set[str], idents: set[str], headers: set[str],
                   diag_lines: dict[str, set[int]], defs: "ProjectDefinitions | None" = None,
                   skip_guarded: bool = False) -> tuple[dict[str, int], dict[str, int], dict[str, list[str]], dict[str, int]]:
    """Returns (silent counts per name, diagnosed counts per name, examples per name,
    counts of names the project defines itself)."""
    own: dict[str, int] = {}
    silent: dict[str, int] = {}
    diagnosed: dict[str, int] = {}
    examples: dict[str, list[str]] = {}
    # A bare `#include "cuda_runtime.h"` (found through -I) is CUDA's header; a
    # bare "config.h" is not Thrust's thrust/system/cuda/config.h, nor HeCBench
    # scan3's "scan.h" (its sibling's, through -I) cooperative_groups/scan.h:
    # only top-level headers count by their file name.
    header_basenames = {Path(h).name: h for h in headers if "/" not in h}
    for rel in files:
        p = out_root / rel
        if rel in skip or p.suffix.lower() not in C_FAMILY or not p.is_file():
            continue
        try:
            raw = p.read_text("utf-8", "replace")
        except OSError:
            continue
        code = strip_comments_strings(raw)
        dl = diag_lines.get(rel, set())
        raw_lines = raw.split("\n")
        conds: list[str] = []  # enclosing #if conditions
        for no, line in enumerate(code.split("\n"), 1):
            stripped = line.lstrip()
            if stripped.startswith("#"):
                directive = stripped[1:].lstrip()
                if directive.startswith(("if", "ifdef", "ifndef")) and not directive.startswith("include"):
                    conds.append(directive)
                elif directive.startswith("elif") and conds:
                    conds[-1] = directive
                elif directive.startswith("endif") and conds:
                    conds.pop()
            if skip_guarded and any("CUPORT_" in c for c in conds):
                continue  # dual: a per-backend switch cuport wrote (the CUDA branch keeps CUDA names)
            hits = [w for w in WORD_RE.findall(line) if w in idents]
            if stripped.startswith("#") and "include" in stripped:
                m = INCLUDE_RE.match(raw_lines[no - 1].encode())
                if m:
                    inc = m.group(1).decode()
                    # The project's own header beside the file (HeCBench scan3's "scan.h",
                    # not cooperative_groups/scan.h) is no library's.
                    own_header = (p.parent / inc).is_file()
                    if not own_header and (inc in headers or (Path(inc).name in header_basenames and "/" not in inc)):
                        hits.append(inc)
            for w in hits:
                if no in dl:
                    diagnosed[w] = diagnosed.get(w, 0) + 1
                elif defs is not None and IDENT_RE.match(w) and defs.defines(w):
                    own[w] = own.get(w, 0) + 1
                else:
                    silent[w] = silent.get(w, 0) + 1
                    ex = examples.setdefault(w, [])
                    if len(ex) < 3:
                        ex.append(f"{rel}:{no}")
    return silent, diagnosed, examples, own


# --- the run -------------------------------------------------------------------------------------

@dataclass
class Variant:
    """One way of compiling the output tree."""
    name: str
    compiler: str  # nvcc | hipcc | hipcpu | simt
    defines: list[str]
    extra: list[str] = field(default_factory=list)


def nvcc_cmd(a, unit: str, tree: Path, extra_defines: list[str], extra: list[str] = ()) -> list[str]:
    extra = list(extra)
    unit_dir = str((tree / unit).parent)
    cmd = [a.nvcc, f"-arch={a.arch}", f"-std={a.std}", "-c", unit, "-o", "/dev/null", "-I", unit_dir]
    for inc in a.tree_include:
        cmd += ["-I", str(tree / inc)]
    for inc in a.cuda_include:
        cmd += ["-I", inc]
    for d in a.define + extra_defines:
        cmd.append(f"-D{d}")
    cmd += unit_flags(a, unit) + a.nvcc_flag + extra
    return cmd


def hipcc_cmd(a, unit: str, tree: Path, extra_defines: list[str], extra: list[str] = ()) -> list[str]:
    extra = list(extra)
    unit_dir = str((tree / unit).parent)
    cmd = [a.hipcc, "-fsyntax-only", "-x", "hip", f"--offload-arch={a.offload_arch}", f"-std={a.std}",
           "-Wno-unused-command-line-argument", "-I", unit_dir]
    for inc in a.tree_include:
        cmd += ["-I", str(tree / inc)]
    for inc in a.hip_include:
        cmd += ["-I", inc]
    # The helpers a port writes (cuport_cg_reduce.h) lie at the root of the
    # output; searched last, so no project or system header is shadowed.
    cmd += ["-idirafter", str(tree)]
    for d in a.define + extra_defines:
        cmd.append(f"-D{d}")
    cmd += unit_flags(a, unit) + a.hipcc_flag + extra + [unit]
    return cmd


REPO = Path(__file__).resolve().parents[2]
SIMT_STANDIN = REPO / "tests" / "simt_standin"
SIMT_RELEASE = "9.1.0"


def simt_include_dirs(a) -> list[str]:
    """The real headers a SIMT port is checked against: asc-devkit and AscendCL of CANN 9.1.0
    (../shared/vendor), HCCL of the torch-npu 2.14.0 wheel."""
    cann = Path(a.cann_vendor) / f"cann-{SIMT_RELEASE}"
    devkit = cann / "asc-devkit"
    dirs = [SIMT_STANDIN, devkit / "include", devkit / "include" / "simt_api", devkit / "include" / "utils",
            devkit, cann / "include"]
    if a.hccl_include:
        # hccl.h includes "third_party/hccl/inc/hccl/hccl_types.h": the wheel's include root too.
        dirs += [Path(a.hccl_include) / "third_party" / "hccl" / "inc", Path(a.hccl_include)]
    return [str(d) for d in dirs]


def rewrite_launches(text: str) -> str:
    """`k<<<cfg>>>(args)` -> `k(args), cuport_chevron_config(cfg)` for g++, as
    crates/cuport_rewrite/tests/common/simt.rs does: the kernel stays applied to its
    arguments, the stand-in's cuport_chevron_config types the configuration as bisheng
    does. Comments and literals are skipped; line breaks are kept."""
    def literal_end(i: int) -> int | None:
        if text.startswith("//", i):
            j = text.find("\n", i)
            return len(text) if j < 0 else j
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            return len(text) if j < 0 else j + 2
        if text[i] in "\"'":
            q, j = text[i], i + 1
            while j < len(text) and text[j] not in (q, "\n"):
                j += 2 if text[j] == "\\" else 1
            return min(j + 1, len(text))
        return None

    def close(i: int, token: str) -> int | None:
        depth = 0
        while i < len(text):
            end = literal_end(i)
            if end is not None:
                i = end
                continue
            if depth == 0 and text.startswith(token, i):
                return i
            depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(text[i], 0)
            i += 1
        return None

    out, i, copied = [], 0, 0
    while i < len(text):
        end = literal_end(i)
        if end is not None:
            i = end
            continue
        if not text.startswith("<<<", i):
            i += 1
            continue
        cfg_end = close(i + 3, ">>>")
        if cfg_end is None:
            break
        k = cfg_end + 3
        while k < len(text) and text[k].isspace():
            k += 1
        args_end = close(k + 1, ")") if k < len(text) and text[k] == "(" else None
        if args_end is None:
            break
        out.append(text[copied:i] + text[k:args_end + 1] + ", cuport_chevron_config(" + text[i + 3:cfg_end] + ")")
        i = copied = args_end + 1
    out.append(text[copied:])
    return "".join(out)


def simt_cmd(a, unit: str, tree: Path, extra_defines: list[str], extra: list[str] = ()) -> list[str]:
    """g++ -fsyntax-only of UNIT's SIMT port: the launches rewritten into a copy beside it
    (`#line` keeps the errors on the port's lines), cuport's stand-in for bisheng's implicit
    names forced in, then the real headers (tests/simt_standin/README.md)."""
    port = tree / unit
    check = port.with_name(port.name + ".simt-check.cpp")
    text = port.read_text(encoding="utf-8", errors="replace")
    check.write_text(f'#line 1 "{port}"\n' + rewrite_launches(text), encoding="utf-8")
    cmd = [a.cxx, f"-std={a.std}", "-fsyntax-only", "-x", "c++", "-D__NPU_ARCH__=3510",
           "-D__NPU_COMPILER_INTERNAL_PURE_SIMT__", "-D__NPU_DEVICE__", "-DNDEBUG",
           "-include", str(SIMT_STANDIN / "asc_simt_standin.h"), "-I", str(port.parent),
           # cuport_shim.h and the helpers are written at the root of the output.
           "-I", str(tree)]
    for inc in a.tree_include:
        cmd += ["-I", str(tree / inc)]
    for inc in simt_include_dirs(a):
        cmd += ["-isystem", inc]
    for d in a.define + extra_defines:
        cmd.append(f"-D{d}")
    cmd += [f for f in unit_flags(a, unit) if f.startswith(("-D", "-U", "-I"))]
    cmd += a.cxx_flag + list(extra) + [str(check)]
    return cmd


HIP_CPU_PRELUDE = Path(__file__).resolve().parent / "hip_cpu_prelude.h"


def hipcpu_exe(a, unit: str) -> Path:
    return a.bin_dir / (re.sub(r"[^A-Za-z0-9._-]+", "_", unit) + ".exe")


def hipcpu_cmd(a, unit: str, tree: Path, extra_defines: list[str], extra: list[str] = ()) -> list[str]:
    """Build the HIP port of UNIT as a program with g++ against AMD's HIP-CPU (header-only, TBB)."""
    unit_dir = str((tree / unit).parent)
    cmd = [a.cxx, f"-std={a.std}", "-O2", "-include", str(HIP_CPU_PRELUDE), "-I", unit_dir]
    for inc in a.tree_include:
        cmd += ["-I", str(tree / inc)]
    cmd += ["-I", str(Path(a.hip_cpu_root) / "include")]
    for d in a.define + extra_defines:
        cmd.append(f"-D{d}")
    # Only preprocessor flags of --unit-flags carry over: the rest are nvcc's.
    cmd += [f for f in unit_flags(a, unit) if f.startswith(("-D", "-U", "-I"))]
    cmd += a.cxx_flag + list(extra)
    cmd += ["-x", "c++", unit, "-x", "none", "-o", str(hipcpu_exe(a, unit)), "-ltbb", "-lpthread"]
    return cmd


# A program's own word that it checked its results and they held.
SUCCESS_RE = re.compile(r"(?i)\b(pass(ed)?|success(ful|fully)?|correct|verified|match(es|ed)?)\b")
# A program that checks with assert() (abort, non-zero exit) needs to print nothing.
ASSERT_RE = re.compile(rb"\bassert\s*\(")


def run_programs(a, units: list[str], out: Path) -> dict[str, dict]:
    """Run each built program (one at a time: HIP-CPU spreads a launch over every core) from its
    unit's directory of the output tree; what it printed and how it ended."""
    runs: dict[str, dict] = {}
    if units:
        log(a, f"hip-cpu: running {len(units)} programs ({a.run_timeout:.0f} s timeout each)")
    for u in units:
        args = [arg for spec in a.run_arg for pat, _, rest in [spec.partition("=")]
                if fnmatch.fnmatch(u, pat) for arg in shlex.split(rest)]
        rc, output, secs = run_cmd([str(hipcpu_exe(a, u))] + args, (out / u).parent, a.run_timeout)
        try:
            asserts = bool(ASSERT_RE.search((out / u).read_bytes()))
        except OSError:
            asserts = False
        said = SUCCESS_RE.search(output)
        if rc == 124:
            verdict = "timeout"
        elif rc != 0:
            verdict = "failed"
        elif said:
            verdict = "passed"
        elif asserts:
            verdict = "passed (assert)"
        else:
            verdict = "exit 0, no self-check seen"
        lines = [l for l in output.splitlines() if l.strip()]
        runs[u] = {"rc": rc, "seconds": round(secs, 2), "verdict": verdict, "args": args,
                   "said": said.group(0) if said else None, "last_line": lines[-1][:200] if lines else ""}
        if a.verbose:
            log(a, f"  run {verdict:<28} {secs:6.1f}s {u}")
    return runs


def summarise_runs(units, before, built, runs) -> dict:
    def count(pred) -> int:
        return sum(1 for u in units if pred(u))
    return {
        "units": len(units),
        "nvcc_as_shipped": count(lambda u: before[u].ok),
        "built": count(lambda u: built[u].ok),
        "passed": count(lambda u: runs.get(u, {}).get("verdict", "").startswith("passed")),
        "failed": count(lambda u: runs.get(u, {}).get("verdict") in ("failed", "timeout")),
        "unchecked": count(lambda u: runs.get(u, {}).get("verdict") == "exit 0, no self-check seen"),
    }


def print_runs(summary: dict, units: dict) -> None:
    w = sys.stdout.write
    w(f"hip-cpu runs: {summary['passed']} passed, {summary['failed']} failed, {summary['unchecked']} ran without "
      f"a self-check, of {summary['built']} built ({summary['units']} units, {summary['nvcc_as_shipped']} "
      f"compile with nvcc as shipped)\n")
    for u, e in units.items():
        r = e.get("run")
        if r is None:
            after = e.get("after", {}).get("hip-cpu build", {})
            why = after.get("class") or ("did not compile with nvcc as shipped" if e["before"]["rc"] else "")
            w(f"  {'not built':<28} {u}: {why} {after.get('detail', '')[:150]}\n")
        else:
            told = f" (printed {r['said']!r})" if r["said"] else ""
            w(f"  {r['verdict']:<28} {u}: {r['seconds']:.1f} s{told}"
              + ("" if r["verdict"].startswith("passed") else f"; last line: {r['last_line'][:120]}") + "\n")
    sys.stdout.flush()


# What HIP-CPU (a CPU emulation of HIP) leaves out that ROCm has: a failure there is HIP-CPU's
# gap, not the port's. Names are checked against ROCm's headers on this system.
UNDECLARED_RE = re.compile(r"[‘'`](?P<n>[A-Za-z_][A-Za-z0-9_]*)[’'] (was not declared|has not been declared|is not a member)")
UNDEFINED_REF_RE = re.compile(r"undefined reference to [`‘'](?P<n>[A-Za-z_][A-Za-z0-9_:]*)")


def hip_cpu_gap(a, r: CompileResult, tree: Path, unit: str) -> str | None:
    """Why a HIP port that hipcc would take does not build on HIP-CPU, if it is HIP-CPU's gap."""
    text = r.output_tail
    fe = r.first_error
    if fe and fe.file and not fe.file.startswith(str(a.hip_cpu_root)) and "/include/hip/" in os.path.normpath(fe.file):
        return f"{os.path.normpath(fe.file)} is ROCm's, HIP-CPU has no such header"
    m = UNDECLARED_RE.search(fe.text if fe else "")
    if m and m.group("n").lower().startswith("hip") and rocm_declares(m.group("n")):
        return f"{m.group('n')} is in ROCm's headers, not in HIP-CPU"
    m = UNDEFINED_REF_RE.search(text)
    if m:
        try:
            src = (tree / unit).read_text(errors="replace")
        except OSError:
            src = ""
        if re.search(r"extern\s+__shared__[^;]*\b" + re.escape(m.group("n")) + r"\b", src):
            return f"extern __shared__ {m.group('n')}: HIP-CPU needs HIP_DYNAMIC_SHARED for dynamic shared memory"
    return None


_rocm_text: str | None = None


def rocm_declares(name: str) -> bool:
    global _rocm_text
    if _rocm_text is None:
        parts = []
        for root in ["/usr/include/hip"] + sorted(glob.glob("/opt/rocm*/include/hip")):
            for dirpath, _, files in os.walk(root):
                for f in files:
                    try:
                        parts.append(Path(dirpath, f).read_text(errors="replace"))
                    except OSError:
                        pass
        _rocm_text = "\n".join(parts)
    return re.search(r"\b" + re.escape(name) + r"\b", _rocm_text) is not None


def unit_flags(a, unit: str) -> list[str]:
    flags: list[str] = []
    for spec in a.unit_flags:
        pat, _, fl = spec.partition("=")
        if fnmatch.fnmatch(unit, pat):
            flags += shlex.split(fl)
    return flags


def build_cmd(a, v: Variant, unit: str, tree: Path) -> list[str]:
    builder = {"nvcc": nvcc_cmd, "hipcc": hipcc_cmd, "hipcpu": hipcpu_cmd, "simt": simt_cmd}[v.compiler]
    return builder(a, unit, tree, v.defines, v.extra)


def cache_key(cmd: list[str], tree: Path) -> str:
    norm = [c.replace(str(tree), "<TREE>") for c in cmd]
    return hashlib.sha256("\0".join(norm).encode()).hexdigest()[:20]


def compile_all(a, units: list[str], tree: Path, v: Variant, label: str, cache: dict | None = None) -> dict[str, CompileResult]:
    results: dict[str, CompileResult] = {}
    todo = []
    for u in units:
        cmd = build_cmd(a, v, u, tree)
        key = cache_key(cmd, tree)
        if cache is not None and key in cache:
            c = cache[key]
            fe = CompileError(**c["first_error"]) if c.get("first_error") else None
            results[u] = CompileResult(c["rc"], c["seconds"], fe, [fe] if fe else [], c.get("output_tail", ""), cmd)
        else:
            todo.append((u, cmd, key))
    if todo:
        log(a, f"{label}: compiling {len(todo)} units with {v.compiler} ({a.jobs} jobs, {a.timeout:.0f} s timeout each)"
               + (f"; {len(units) - len(todo)} from cache" if len(todo) < len(units) else ""))
    done = 0
    env = None
    if v.compiler == "hipcc":
        # hipcc picks the NVIDIA platform when nvcc is on PATH: force AMD (clang) unless told otherwise.
        env = dict(os.environ)
        env.setdefault("HIP_PLATFORM", "amd")
    with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(compile_unit, cmd, tree, a.timeout, env): (u, key) for u, cmd, key in todo}
        for fut in cf.as_completed(futs):
            u, key = futs[fut]
            r = fut.result()
            results[u] = r
            done += 1
            if a.verbose:
                log(a, f"  [{done}/{len(todo)}] {'ok  ' if r.ok else 'FAIL'} {r.seconds:6.1f}s {u}"
                       + ("" if r.ok else f"  {r.first_error_text()[:160]}"))
            if cache is not None:
                cache[key] = {"unit": u, "rc": r.rc, "seconds": r.seconds,
                              "first_error": asdict(r.first_error) if r.first_error else None,
                              "output_tail": r.output_tail[-1500:]}
    return results


def log(a, msg: str) -> None:
    if not a.quiet:
        print(f"[corpus_check] {msg}", file=sys.stderr, flush=True)


def installed_rocm_version() -> str:
    """The ROCm release of the HIP headers hipcc uses: Debian's package
    version (5.2.3), else MAJOR.MINOR.0 from hip_version.h (its PATCH is a
    build number, not a release)."""
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libamdhip64-dev"],
                             capture_output=True, text=True, check=True).stdout
        m = re.match(r"(\d+\.\d+\.\d+)", out)
        if m:
            return m.group(1)
    except (OSError, subprocess.CalledProcessError):
        pass
    for path in ["/usr/include/hip/hip_version.h"] + sorted(glob.glob("/opt/rocm*/include/hip/hip_version.h")):
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        major = re.search(r"HIP_VERSION_MAJOR (\d+)", text)
        minor = re.search(r"HIP_VERSION_MINOR (\d+)", text)
        if major and minor:
            return f"{major.group(1)}.{minor.group(1)}.0"
    return "newest"


def run_cuport(a, src: Path, out: Path) -> tuple[Migration, dict]:
    if a.mode in ("hip", "hip-cpu"):
        cmd = [a.cuport, "migrate", "--to", "hip", str(src), "--out", str(out), "--format", "json"]
        if a.mode == "hip-cpu":  # HIP-CPU is plain C++: no <<<>>>
            cmd += ["--hip-kernel-launch", "ggl"]
        elif a.rocm_version != "newest":
            cmd += ["--rocm-version", a.rocm_version]
    elif a.mode == "ascend-simt":
        cmd = [a.cuport, "migrate", "--to", "ascend", "--ascend-kernels", "simt", "--cann-version", SIMT_RELEASE,
               str(src), "--out", str(out), "--format", "json"]
    else:
        cmd = [a.cuport, "migrate", "--dual", "--to", a.dual_targets, str(src), "--out", str(out), "--format", "json"]
        # The shim's HIP branch is made for the HIP it is compiled with.
        if "hip" in a.dual_targets.split(",") and a.rocm_version != "newest":
            cmd += ["--rocm-version", a.rocm_version]
    cmd += a.cuport_arg
    log(a, "running " + " ".join(shlex.quote(c) for c in cmd))
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=a.migrate_timeout)
    secs = time.monotonic() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"corpus_check: cuport migrate failed (exit {proc.returncode}):\n"
                         + proc.stderr.decode("utf-8", "replace")[-3000:])
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise SystemExit(f"corpus_check: cuport migrate printed no JSON document ({e}); stderr:\n"
                         + proc.stderr.decode("utf-8", "replace")[-3000:])
    if doc.get("format") not in ("cuport-report", "cuport-migrate"):
        raise SystemExit(f"corpus_check: unexpected JSON format {doc.get('format')!r} (want cuport-report)")
    if a.mode == "ascend-simt":
        # The SIMT port writes .cu files as .asc (what bisheng compiles); the check compiles
        # each unit's port under its original name too (g++ reads it as C++ either way), so
        # that units, line maps and leftovers keep the tree's paths.
        for r in doc.get("renames", []):
            shutil.copyfile(out / r["to"], out / r["from"])
    mig = load_migration(doc, src, out)
    mig.seconds = round(secs, 2)
    mig.message = " ".join(cmd)
    return mig, doc


def run_hipify_perl(a, src: Path, out: Path) -> Migration:
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(src, out, symlinks=True, ignore=shutil.ignore_patterns(*SKIP_DIRS))
    files = [str(p) for p in walk_files(out) if p.suffix.lower() in C_FAMILY and not p.is_symlink()]
    cmd = ["perl", a.hipify_perl, "-inplace", "-quiet-warnings"] + files
    log(a, f"running hipify-perl -inplace -quiet-warnings on {len(files)} files")
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=a.migrate_timeout)
    secs = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"corpus_check: hipify-perl failed (exit {proc.returncode}):\n" + proc.stderr.decode()[-3000:])
    for p in out.rglob("*.prehip"):
        p.unlink()
    mig = Migration(True, round(secs, 2), " ".join(cmd[:4]) + f" <{len(files)} files>")
    mig.files = [str(Path(f).relative_to(out)) for f in files]
    return mig


COMPILER_PRIVATE = ("/usr/lib/gcc/", "/usr/lib/llvm-", "/usr/lib/clang/", "/usr/local/lib/clang/")
SAME_NAME_ON_HIP = ("thrust/",)  # rocThrust keeps thrust/...; hipCUB does not keep cub/


@dataclass
class Ctx:
    src: Path
    out: Path
    mig: "Migration"
    hdr: "HeaderIndex"
    cuda_dirs: list[str]      # nvcc's own include dirs + --cuda-include
    mapped_headers: set[str]  # CUDA headers the tables map to something else for the target
    exact_headers: set[str]   # headers the tables keep as they are


DIRECTIVE_RE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b")


def flagged_condition(path: Path, line: int, diag_lines: set[int]) -> int | None:
    """The line of a flagged `#if`/`#elif` whose branch chain encloses LINE (1-based), if any."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return None
    depth = 0
    for no in range(min(line, len(lines)) - 1, 0, -1):
        m = DIRECTIVE_RE.match(lines[no - 1])
        if not m:
            continue
        word = m.group(1)
        if word == "endif":
            depth += 1
        elif word in ("if", "ifdef", "ifndef"):
            if depth == 0 and no in diag_lines:
                return no
            depth = max(depth - 1, 0)
        elif depth == 0 and word == "elif" and no in diag_lines:
            return no
    return None


def flagged_instantiation(fe: CompileError, tree: Path, mig: Migration) -> str | None:
    """An error in a library header whose template the port's code instantiated
    with a name cuport diagnosed in that file (`hipcub::BlockLoad<int, 32, 32,
    hipcub::BLOCK_LOAD_WARP_TRANSPOSE>` after the wavefront note on the name):
    where it was instantiated from and the diagnostic, else None. The note's
    line is where the template is used, not always the diagnosed line."""
    for file, line, note in fe.instantiated_at:
        try:
            rel = str(Path(os.path.normpath(os.path.join(tree, file))).resolve().relative_to(tree.resolve()))
        except ValueError:
            continue
        for diag_line, codes in mig.diag_codes.get(rel, {}).items():
            for code in codes:
                name = code.split(":", 1)[-1].rsplit("::", 1)[-1]
                if len(name) > 3 and re.search(rf"\b{re.escape(name)}\b", note[note.find("note:"):]):
                    return f"instantiated from {rel}:{line} with `{name}`, diagnosed on line {diag_line} ({code})"
    return None


def classify(a, r: CompileResult, ctx: Ctx, compiler: str, unit: str) -> tuple[str, str]:
    """(class, detail) for a unit that compiled before and fails now."""
    found = classify_compile(a, r, ctx, compiler, unit)
    if compiler == "hipcpu" and found[0] == "unexplained":
        gap = hip_cpu_gap(a, r, ctx.out, unit)
        if gap:
            return "hip-cpu-gap", gap
    return found


def classify_compile(a, r: CompileResult, ctx: Ctx, compiler: str, unit: str) -> tuple[str, str]:
    tree, mig = ctx.out, ctx.mig
    fe = r.first_error
    if r.rc == 124:
        return "unexplained", "timeout"
    if fe is None:
        return "unexplained", r.first_error_text()[:300]
    where, rel, flagged = "", None, False
    if fe.file:
        path = Path(os.path.normpath(os.path.join(tree, fe.file)))
        try:
            rel = str(path.resolve().relative_to(tree.resolve()))
        except ValueError:
            rel = None
        where = f"{rel}:{fe.line}" if rel is not None else f"{fe.file}:{fe.line}"
        if rel is not None:
            flagged = fe.line in mig.diag_lines.get(rel, set())
    if flagged:
        codes = mig.diag_codes.get(rel, {}).get(fe.line, [])
        return "flagged", f"{where} {','.join(sorted(set(codes)))[:200]}"
    if rel is None:
        found = flagged_instantiation(fe, tree, mig)
        if found:
            return "flagged", f"{where} {found}"
    if rel is not None and fe.line:
        # The error sits in a branch whose condition cuport flagged (`#if CUDART_VERSION >= 2020`
        # left as written, false on HIP, so the `#else` branch is compiled): the flag explains it.
        cond = flagged_condition(tree / rel, fe.line, mig.diag_lines.get(rel, set()))
        if cond is not None:
            codes = mig.diag_codes.get(rel, {}).get(cond, [])
            return "flagged", f"{where} in a branch of the condition on line {cond} {','.join(sorted(set(codes)))[:200]}"
    header = missing_header(fe)
    if header:
        # 1. the original tree had it (the output lost it, or the include path changed)
        includer = (ctx.src / rel).parent if rel else (ctx.src / unit).parent
        src_dirs = [includer, (ctx.src / unit).parent] + [ctx.src / i for i in a.tree_include]
        if any((d / header).is_file() for d in src_dirs):
            return "unexplained", f"header of the original tree not found in the output: {header} ({where})"
        if "cuport" in header:
            return "unexplained", f"generated shim header not found: {header} ({where})"
        # 2. a CUDA header left in HIP output (one with a HIP replacement or none at all)
        if compiler == "hipcc":
            same = header in ctx.exact_headers or header.startswith(SAME_NAME_ON_HIP)
            cuda_hit = next((os.path.join(d, header) for d in ctx.cuda_dirs if os.path.isfile(os.path.join(d, header))), None)
            if not same and (header in ctx.mapped_headers or cuda_hit):
                return "unexplained", f"cuda-header-left: {header} ({where})"
        # 3. present on this system at all?
        dirs = [str((tree / unit).parent)] + [str(tree / i) for i in a.tree_include]
        dirs += {"nvcc": ctx.cuda_dirs, "simt": simt_include_dirs(a) if compiler == "simt" else []}.get(
            compiler, a.hip_include)  # cuda_dirs: nvcc's own + --cuda-include
        found = ctx.hdr.present(header, dirs, compiler)
        if found is None and compiler == "nvcc":
            # The CUDA build of the port: the original compiled here, so the port brought the include in.
            gen = " (in a generated file)" if rel in set(mig.generated) else ""
            return "unexplained", f"missing header introduced by the port: {header} ({where}){gen}"
        if found is None:
            other = ctx.hdr.elsewhere(header)
            return f"missing-header: {header}", where + (f" (only in {other}, not searched by {compiler})" if other else "")
        return "unexplained", f"header exists at {found} but not on the include path: {header} ({where})"
    return "unexplained", f"{where} {fe.message[:240]}".strip()


def main(argv: list[str] | None = None) -> int:
    env = os.environ
    p = argparse.ArgumentParser(
        prog="corpus_check.py",
        description="Compile a real CUDA code base as shipped and after cuport migrate; explain every regression.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="""examples:
  corpus_check.py --src cuda-samples --cuport target/release/cuport --mode hip --tree-include Common
  corpus_check.py --src cuda-samples --cuport target/release/cuport --mode dual --tree-include Common \\
      --baseline-cache /tmp/cs-nvcc.json
  corpus_check.py --src llm.c --cuport target/release/cuport --mode hip --add-unit train_gpt2.cu \\
      --add-unit train_gpt2_fp32.cu -D ENABLE_BF16 --tree-include dev
  corpus_check.py --src cuda-samples --baseline-only --tree-include Common --tsv nvcc.tsv

environment (defaults for the options): CUPORT_NVCC, CUPORT_CUDA_INCLUDES (colon-separated),
CUPORT_HIPCC, CUPORT_HIP_INCLUDES, CUPORT_BIN (the cuport binary).""")
    p.add_argument("--src", required=True, type=Path, help="checkout of the code base (not modified)")
    p.add_argument("--cuport", default=env.get("CUPORT_BIN"), help="cuport binary (or $CUPORT_BIN)")
    p.add_argument("--mode", choices=["hip", "dual", "hip-cpu", "ascend-simt"], default="hip",
                   help="hip: hipcc -fsyntax-only on the HIP port; dual: nvcc on the dual-stack port; "
                        "hip-cpu: build the HIP port (--hip-kernel-launch ggl) with --cxx against HIP-CPU and run it; "
                        "ascend-simt: g++ -fsyntax-only on the Ascend C SIMT port (--ascend-kernels simt, CANN 9.1.0) "
                        "against the real asc-devkit/AscendCL headers with cuport's stand-in for bisheng")
    p.add_argument("--cann-vendor", default=env.get("CUPORT_CANN_VENDOR"),
                   help="mode ascend-simt: the unpacked CANN header archive, cannvendor/ (or $CUPORT_CANN_VENDOR; "
                        "../shared/vendor/unpack-cann-headers.sh prints it)")
    p.add_argument("--hccl-include", default=env.get("CUPORT_CANN_2_14_0_INCLUDE"),
                   help="mode ascend-simt: the include folder of the torch-npu 2.14.0 wheel, for HCCL "
                        "(default $CUPORT_CANN_2_14_0_INCLUDE, which tests/corpus/fetch_toolchains.sh sets)")
    p.add_argument("--hip-cpu-root", default=env.get("HIP_CPU_ROOT"),
                   help="mode hip-cpu: checkout of github.com/ROCm/HIP-CPU with external/ (or $HIP_CPU_ROOT)")
    p.add_argument("--cxx", default=env.get("CXX", "g++"), help="mode hip-cpu: the C++ compiler (default $CXX or g++)")
    p.add_argument("--cxx-flag", action="append", default=[], metavar="FLAG", help="mode hip-cpu: extra compiler flag")
    p.add_argument("--run-timeout", type=float, default=600.0, help="mode hip-cpu: seconds per program run (default 600)")
    p.add_argument("--run-arg", action="append", default=[], metavar="GLOB=ARGS",
                   help="mode hip-cpu: command-line arguments for the programs whose unit matches GLOB")
    p.add_argument("--translator", choices=["cuport", "hipify-perl"], default="cuport",
                   help="what produces the output tree (hipify-perl: mode hip only, for comparison)")
    p.add_argument("--hipify-perl", default=env.get("CUPORT_HIPIFY_PERL"), help="path of ROCm's hipify-perl")
    p.add_argument("--dual-targets", default="ascend,hip", help="--to list for --mode dual (default ascend,hip)")
    p.add_argument("--dual-hip", action="store_true", help="mode dual: also compile the output with hipcc -DCUPORT_BACKEND_HIP")
    p.add_argument("--nvcc", default=env.get("CUPORT_NVCC", "nvcc"))
    p.add_argument("--hipcc", default=env.get("CUPORT_HIPCC", "hipcc"))
    p.add_argument("--cuda-include", action="append", default=None, metavar="DIR",
                   help="include dir for nvcc only (repeatable; default $CUPORT_CUDA_INCLUDES)")
    p.add_argument("--hip-include", action="append", default=None, metavar="DIR",
                   help="include dir for hipcc only (repeatable; default $CUPORT_HIP_INCLUDES)")
    p.add_argument("--tree-include", action="append", default=[], metavar="REL",
                   help="include dir relative to the tree root, used before and after (e.g. Common)")
    p.add_argument("-D", "--define", action="append", default=[], metavar="NAME[=VAL]", help="for every compile")
    p.add_argument("--unit-flags", action="append", default=[], metavar="GLOB=FLAGS",
                   help="extra compiler flags for units matching GLOB (shell-split), e.g. 'dev/cuda/*=-DFOO'")
    p.add_argument("--nvcc-flag", action="append", default=[], metavar="FLAG")
    p.add_argument("--hipcc-flag", action="append", default=[], metavar="FLAG")
    p.add_argument("--arch", default="sm_80")
    p.add_argument("--offload-arch", default="gfx90a")
    p.add_argument("--std", default="c++17")
    p.add_argument("--under", action="append", default=[], metavar="REL", help="only units under these dirs")
    p.add_argument("--unit", action="append", default=[], metavar="REL", help="explicit units (replaces enumeration)")
    p.add_argument("--units-file", type=Path, help="file with one unit path (relative to --src) per line")
    p.add_argument("--add-unit", action="append", default=[], metavar="REL",
                   help="add a unit to the enumeration (e.g. a .cu that is also #included elsewhere)")
    p.add_argument("--list-units", action="store_true", help="print the units (and the excluded .cu files) and exit")
    p.add_argument("--baseline-only", action="store_true", help="only compile the tree as shipped with nvcc")
    p.add_argument("--baseline-cache", type=Path, help="JSON cache of nvcc results of the tree as shipped (read and updated)")
    p.add_argument("-j", "--jobs", type=int, default=int(env.get("CORPUS_CHECK_JOBS", "2")))
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per compile (default 300)")
    p.add_argument("--migrate-timeout", type=float, default=1800.0)
    p.add_argument("--work", type=Path, help="work dir (default: a temporary dir, removed unless --keep)")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--cuport-arg", action="append", default=[], metavar="ARG", help="extra argument for cuport migrate")
    p.add_argument("--rocm-version", default="installed", metavar="X.Y.Z|installed|newest",
                   help="--mode hip, and --mode dual with hip: the ROCm release the port is made for (cuport --rocm-version); "
                        "'installed' (default): the release of the HIP headers hipcc compiles with, as a "
                        "user of that ROCm would choose; 'newest': no release, the tables' newest")
    p.add_argument("--no-leftovers", action="store_true", help="skip the silent-leftover check")
    p.add_argument("--stub-missing", action="store_true",
                   help="compile missing-header units again with empty stand-ins for the missing headers "
                        "and classify the next error (shows what the missing header hides; 'stub-artifact': "
                        "the next error is inside a system header, caused by an empty stub)")
    p.add_argument("--json", type=Path, help="write all details as JSON")
    p.add_argument("--tsv", type=Path, help="write per-unit details as TSV")
    p.add_argument("-v", "--verbose", action="store_true", help="a line per compile")
    p.add_argument("-q", "--quiet", action="store_true")
    a = p.parse_args(argv)
    if a.rocm_version == "installed":
        a.rocm_version = installed_rocm_version()

    a.cuda_include = a.cuda_include if a.cuda_include is not None else [d for d in env.get("CUPORT_CUDA_INCLUDES", "").split(":") if d]
    a.hip_include = a.hip_include if a.hip_include is not None else [d for d in env.get("CUPORT_HIP_INCLUDES", "").split(":") if d]
    src = a.src.resolve()
    if not src.is_dir():
        p.error(f"--src {a.src}: not a directory")
    for d in a.cuda_include + a.hip_include:
        if not os.path.isdir(d):
            p.error(f"include dir {d} does not exist")
    if a.jobs < 1:
        p.error("--jobs must be at least 1")

    # (a) units
    if a.unit or a.units_file:
        units = list(a.unit)
        if a.units_file:
            units += [l.strip() for l in a.units_file.read_text().splitlines() if l.strip() and not l.startswith("#")]
        excluded = {}
    else:
        units, excluded = enumerate_units(src, a.under)
    for u in a.add_unit:
        if u not in units:
            units.append(u)
    missing = [u for u in units if not (src / u).is_file()]
    if missing:
        p.error("units not found under --src: " + ", ".join(missing[:10]))
    units = sorted(set(units))
    if a.list_units:
        for u in units:
            print(u)
        for u, by in sorted(excluded.items()):
            print(f"# not a unit: {u} (#included by {', '.join(by)})")
        print(f"# {len(units)} units, {len(excluded)} .cu files #included by others", file=sys.stderr)
        return 0
    if not units:
        p.error(f"no translation units found under {src}")

    def need(tool: str, what: str) -> str:
        path = shutil.which(tool) if tool else None
        if not path:
            p.error(f"{what} not found: {tool!r} (give its path with the option or environment variable)")
        return path

    a.nvcc = need(a.nvcc, "nvcc (--nvcc / $CUPORT_NVCC)")
    if not a.baseline_only:
        if a.translator == "cuport":
            if not a.cuport:
                p.error("--cuport PATH (or $CUPORT_BIN) is required unless --baseline-only")
            a.cuport = need(a.cuport, "cuport (--cuport / $CUPORT_BIN)")
        else:
            if a.mode == "dual":
                p.error("--translator hipify-perl works with --mode hip or hip-cpu only")
            if not a.hipify_perl or not os.path.isfile(a.hipify_perl):
                p.error("--hipify-perl PATH is required with --translator hipify-perl")
        if a.mode == "hip" or a.dual_hip:
            a.hipcc = need(a.hipcc, "hipcc (--hipcc / $CUPORT_HIPCC)")
        if a.mode == "ascend-simt":
            if not a.cann_vendor or not (Path(a.cann_vendor) / f"cann-{SIMT_RELEASE}" / "asc-devkit").is_dir():
                p.error("--mode ascend-simt needs --cann-vendor (or $CUPORT_CANN_VENDOR): the folder "
                        "../shared/vendor/unpack-cann-headers.sh prints")
            a.cxx = need(a.cxx, "C++ compiler (--cxx / $CXX)")
        if a.mode == "hip-cpu":
            if not a.hip_cpu_root or not (Path(a.hip_cpu_root) / "include" / "hip" / "hip_runtime.h").is_file():
                p.error("--mode hip-cpu needs --hip-cpu-root (or $HIP_CPU_ROOT): a checkout of github.com/ROCm/HIP-CPU "
                        "with its external/ folder (include/hip/hip_runtime.h was not found)")
            a.cxx = need(a.cxx, "C++ compiler (--cxx / $CXX)")

    work = a.work.resolve() if a.work else Path(tempfile.mkdtemp(prefix="corpus_check."))
    work.mkdir(parents=True, exist_ok=True)
    out = work / "out"
    a.bin_dir = work / "bin"
    a.bin_dir.mkdir(exist_ok=True)
    report: dict = {"src": str(src), "mode": a.mode, "translator": a.translator, "units": {},
                    "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()}}
    try:
        # (b) as shipped
        cache = None
        if a.baseline_cache and a.baseline_cache.exists():
            try:
                cache = json.loads(a.baseline_cache.read_text())
            except (OSError, json.JSONDecodeError):
                cache = {}
        elif a.baseline_cache:
            cache = {}
        t0 = time.monotonic()
        before = compile_all(a, units, src, Variant("as shipped", "nvcc", []), "as shipped", cache)
        report["before_seconds"] = round(time.monotonic() - t0, 1)
        if a.baseline_cache and cache is not None:
            a.baseline_cache.parent.mkdir(parents=True, exist_ok=True)
            a.baseline_cache.write_text(json.dumps(cache, indent=1, sort_keys=True))
        n_before = sum(r.ok for r in before.values())
        for u in units:
            report["units"][u] = {"before": {"rc": before[u].rc, "seconds": before[u].seconds,
                                             "first_error": before[u].first_error_text()[:500]}}
        if a.baseline_only:
            print_table(a, units, before, {}, {})
            write_outputs(a, report, units, before, {}, {})
            return 0

        # (c) migrate
        if a.translator == "cuport":
            if out.exists():
                shutil.rmtree(out)
            mig, doc = run_cuport(a, src, out)
        else:
            mig, doc = run_hipify_perl(a, src, out), {}
        report["migration"] = {"command": mig.message, "seconds": mig.seconds, "totals": mig.totals,
                               "generated": mig.generated, "inexact_line_maps": mig.inexact_maps}
        log(a, f"migration took {mig.seconds:.1f} s; output in {out}")
        missing_out = [u for u in units if not (out / u).is_file()]
        if missing_out:
            log(a, f"warning: {len(missing_out)} units are missing from the output (renamed?): {missing_out[:5]}")

        # rules for leftovers and CUDA header names
        idents, headers, libs, exact_headers = set(), set(), {}, set()
        if a.translator == "cuport":
            one_way = a.mode in ("hip", "hip-cpu", "ascend-simt")
            targets = ({"ascend-simt": ["ascend"]}.get(a.mode, ["hip"]) if one_way
                       else [t for t in a.dual_targets.split(",") if t])
            rules_extra = ["--ascend-kernels", "simt"] if a.mode == "ascend-simt" else []
            # dual: kernels stay CUDA (device code), so device-side names are not leftovers there
            skip_libs = set() if one_way else {"device", "cooperative-groups", "cub", "thrust", "torch", "build"}
            idents, headers, libs, exact_headers = rules_names(a.cuport, targets, skip_libs, 120, rules_extra)
            if a.mode == "dual":  # header classification wants every mapped header, device ones too
                _, mapped_headers, _, _ = rules_names(a.cuport, targets, set(), 120)
            else:
                mapped_headers = headers
        else:
            idents, headers, libs, exact_headers = rules_names_hipify_fallback(a)
            mapped_headers = headers

        # (d) compile the output
        if a.mode == "hip":
            variants = [Variant("hip", "hipcc", [])]
        elif a.mode == "hip-cpu":
            variants = [Variant("hip-cpu build", "hipcpu", [])]
        elif a.mode == "ascend-simt":
            variants = [Variant(f"ascend-simt g++ (CANN {SIMT_RELEASE} headers)", "simt", [])]
        else:
            variants = [Variant("cuda -DCUPORT_BACKEND_CUDA", "nvcc", ["CUPORT_BACKEND_CUDA"]),
                        Variant("cuda (no backend macro)", "nvcc", [])]
            if a.dual_hip:
                variants.append(Variant("hip -DCUPORT_BACKEND_HIP", "hipcc", ["CUPORT_BACKEND_HIP"]))
        nvcc_root = Path(a.nvcc).resolve().parent.parent
        cuda_dirs = [str(d) for d in (nvcc_root / "include", nvcc_root / "include" / "cccl",
                                      nvcc_root / "targets" / "x86_64-linux" / "include") if d.is_dir()]
        cuda_dirs += a.cuda_include
        target_dirs = simt_include_dirs(a) if a.mode == "ascend-simt" else a.hip_include
        ctx = Ctx(src, out, mig, HeaderIndex(target_dirs), cuda_dirs, mapped_headers, exact_headers)
        afters: dict[str, dict[str, CompileResult]] = {}
        classes: dict[str, dict[str, tuple[str, str]]] = {}
        present = [u for u in units if (out / u).is_file()]
        for v in variants:
            t0 = time.monotonic()
            res = compile_all(a, present, out, v, v.name)
            report.setdefault("after_seconds", {})[v.name] = round(time.monotonic() - t0, 1)
            for u in units:
                if u not in res:
                    res[u] = CompileResult(-1, 0.0, CompileError(None, None, "unit missing from output", "unit missing from output"), [], "", [])
            afters[v.name] = res
            cl: dict[str, tuple[str, str]] = {}
            for u in units:
                if before[u].ok and not res[u].ok:
                    cl[u] = classify(a, res[u], ctx, v.compiler, u)
            classes[v.name] = cl
            stubbed = stub_pass(a, v, cl, ctx, out, work) if a.stub_missing else {}
            report.setdefault("stubbed", {})[v.name] = {u: {"class": c, "detail": d, "stubs": st} for u, (c, d, st) in stubbed.items()}
            for u in units:
                entry = report["units"][u].setdefault("after", {})
                entry[v.name] = {"rc": res[u].rc, "seconds": res[u].seconds,
                                 "first_error": res[u].first_error_text()[:500]}
                if u in cl:
                    entry[v.name]["class"], entry[v.name]["detail"] = cl[u]

        # (e) HIP-CPU: run what built
        if a.mode == "hip-cpu":
            runs = run_programs(a, [u for u in units if afters["hip-cpu build"][u].ok], out)
            for u, r in runs.items():
                report["units"][u]["run"] = r
            report["runs"] = summarise_runs(units, before, afters["hip-cpu build"], runs)

        # (f) leftovers
        if not a.no_leftovers and (idents or headers):
            skip = set(mig.generated)
            silent, diagnosed, examples, own = find_leftovers(out, mig.files, skip, idents, headers, mig.diag_lines,
                                                              ProjectDefinitions(src), skip_guarded=a.mode == "dual")
            report["leftovers"] = {
                "names_checked": len(idents) + len(headers),
                "silent_total": sum(silent.values()),
                "silent": dict(sorted(silent.items(), key=lambda kv: (-kv[1], kv[0]))),
                "silent_by_library": tally_by(silent, libs),
                "diagnosed_total": sum(diagnosed.values()),
                "project_defined_total": sum(own.values()),
                "project_defined": dict(sorted(own.items(), key=lambda kv: (-kv[1], kv[0]))),
                "examples": examples,
            }
        stub_view = {k: {u: (e["class"], e["detail"], e["stubs"]) for u, e in v.items()} for k, v in report.get("stubbed", {}).items()}
        print_table(a, units, before, afters, classes, report.get("leftovers"), mig, stub_view)
        if "runs" in report:
            print_runs(report["runs"], report["units"])
        write_outputs(a, report, units, before, afters, classes)
        return 0
    finally:
        if not a.work and not a.keep:
            shutil.rmtree(work, ignore_errors=True)
        elif a.keep or a.work:
            log(a, f"work dir kept: {work}")


def absent_includes(a, ctx: "Ctx", out: Path, compiler: str) -> set[str]:
    """Every `#include` name of the output tree that the classifier would call a missing header:
    absent from this system, not a file of the original tree, not a CUDA header left in HIP
    output, not cuport's shim."""
    names: set[str] = set()
    for p in walk_files(out):
        if p.suffix.lower() in C_FAMILY:
            try:
                data = p.read_bytes()
            except OSError:
                continue
            names.update(m.group(1).decode("utf-8", "replace").strip() for m in INCLUDE_RE.finditer(data))
    src_tails = {str(q.relative_to(ctx.src)) for q in walk_files(ctx.src)}
    src_tails |= {str(q.relative_to(out)) for q in walk_files(out)}  # generated files too
    absent = set()
    for h in names:
        norm = os.path.normpath(h)
        if norm.startswith("..") or os.path.isabs(norm) or "cuport" in h:
            continue
        if any(t == norm or t.endswith("/" + norm) for t in src_tails):
            continue
        if compiler == "hipcc":
            same = h in ctx.exact_headers or h.startswith(SAME_NAME_ON_HIP)
            if not same and (h in ctx.mapped_headers or any(os.path.isfile(os.path.join(d, h)) for d in ctx.cuda_dirs)):
                continue
        if ctx.hdr.present(h, ctx.cuda_dirs if compiler == "nvcc" else a.hip_include, compiler) is None:
            absent.add(h)
    return absent


def includes_any(path: Path, stubdir: Path) -> bool:
    """Whether the file #includes a header that exists in the stub dir."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return any((stubdir / m.group(1).decode("utf-8", "replace").strip()).is_file() for m in INCLUDE_RE.finditer(data))


def stub_pass(a, v: "Variant", cl: dict[str, tuple[str, str]], ctx: "Ctx", out: Path, work: Path) -> dict[str, tuple[str, str, list[str]]]:
    """Units whose first error is a missing header (or, in a CUDA build of the port, a header the port
    brought in): compile again with empty stand-ins for the missing headers (an -isystem dir of empty files; only headers absent from this system are
    stubbed), up to 4 rounds, and classify what the compiler says next. (class, detail, stubs)."""
    intro = "missing header introduced by the port: "
    pending = {u: [c.split(": ", 1)[1]] for u, (c, _) in cl.items() if c.startswith("missing-header: ")}
    pending.update({u: [d[len(intro):].split(" (")[0]] for u, (c, d) in cl.items() if d.startswith(intro)})
    if not pending:
        return {}
    stubdir = work / "stubs" / re.sub(r"[^A-Za-z0-9]+", "-", v.name).strip("-")
    result: dict[str, tuple[str, str, list[str]]] = {}
    # Stub up front every included header that would classify as missing (saves a round per header).
    for h in sorted(absent_includes(a, ctx, out, v.compiler)):
        f = stubdir / h
        f.parent.mkdir(parents=True, exist_ok=True)
        if not f.exists():
            f.write_text(f"/* corpus_check: empty stand-in for <{h}>, absent from this system */\n")
    sv = Variant(v.name + " +stubs", v.compiler, v.defines, v.extra + ["-isystem", str(stubdir)])
    for _ in range(4):
        if not pending:
            break
        for hs in pending.values():
            for h in hs:
                f = stubdir / h
                f.parent.mkdir(parents=True, exist_ok=True)
                if not f.exists():
                    f.write_text(f"/* corpus_check: empty stand-in for <{h}>, absent from this system */\n")
        res = compile_all(a, sorted(pending), out, sv, f"{v.name}: again with empty stubs for {len({h for hs in pending.values() for h in hs})} missing headers")
        nxt = {}
        for u, stubs in pending.items():
            r = res[u]
            if r.ok:
                result[u] = ("ok-with-stubs", "", stubs)
                continue
            c, d = classify(a, r, ctx, v.compiler, u)
            fe = r.first_error
            if c == "unexplained" and fe is not None and fe.file:
                efile = Path(os.path.normpath(os.path.join(out, fe.file)))
                if not str(efile).startswith(str(out) + os.sep) and includes_any(efile, stubdir):
                    c = "stub-artifact"  # a system header that includes an empty stub fails
            if c.startswith("missing-header: ") and c.split(": ", 1)[1] not in stubs:
                nxt[u] = stubs + [c.split(": ", 1)[1]]
            elif d.startswith(intro) and d[len(intro):].split(" (")[0] not in stubs:
                nxt[u] = stubs + [d[len(intro):].split(" (")[0]]
            else:
                result[u] = (c, d, stubs)
        pending = nxt
    for u, stubs in pending.items():
        result[u] = ("missing-header", "more than 4 rounds of missing headers", stubs)
    return result


def rules_names_hipify_fallback(a) -> tuple[set[str], set[str], dict[str, str], set[str]]:
    """hipify-perl output: use cuport's tables when a cuport binary is given, else no check."""
    if a.cuport and shutil.which(a.cuport):
        return rules_names(shutil.which(a.cuport), ["hip"], set(), 120)
    return set(), set(), {}, set()


def tally_by(counts: dict[str, int], libs: dict[str, str]) -> dict[str, int]:
    t: dict[str, int] = {}
    for k, n in counts.items():
        lib = libs.get(k, "-")
        t[lib] = t.get(lib, 0) + n
    return dict(sorted(t.items(), key=lambda kv: -kv[1]))


def print_table(a, units, before, afters, classes, leftovers=None, mig=None, stubbed=None) -> None:
    n = len(units)
    nb = sum(before[u].ok for u in units)
    w = sys.stdout.write
    hip_port = a.mode == "hip" or (a.mode == "dual" and "hip" in a.dual_targets.split(","))
    made_for = f", --rocm-version {a.rocm_version}" if hip_port and a.translator == "cuport" else ""
    w(f"\ncorpus_check: {a.src} ({'baseline only' if not afters else a.mode + ' via ' + a.translator}{made_for})\n")
    if mig is not None:
        w(f"migration: {mig.seconds:.1f} s" + (f"; {mig.inexact_maps} files whose line map is approximate" if mig.inexact_maps else "") + "\n")
    hdr = f"{'variant':<30} {'units':>6} {'before':>7} {'after':>6} {'missing-header':>15} {'flagged':>8} {'unexplained':>12} {'fixed':>6}\n"
    w(hdr)
    if not afters:
        w(f"{'nvcc as shipped':<30} {n:>6} {nb:>7}\n")
    for name, res in afters.items():
        cl = classes[name]
        na = sum(res[u].ok for u in units)
        mh = sum(1 for c, _ in cl.values() if c.startswith("missing-header"))
        fl = sum(1 for c, _ in cl.values() if c == "flagged")
        un = sum(1 for c, _ in cl.values() if c == "unexplained")
        fixed = sum(1 for u in units if not before[u].ok and res[u].ok)
        w(f"{name:<30} {n:>6} {nb:>7} {na:>6} {mh:>15} {fl:>8} {un:>12} {fixed:>6}\n")
        gaps = sum(1 for c, _ in cl.values() if c == "hip-cpu-gap")
        if gaps:
            w(f"  {name}: {gaps} units use what ROCm has and HIP-CPU does not (hip-cpu-gap)\n")
    for name, st in (stubbed or {}).items():
        if not st:
            continue
        cnt: dict[str, int] = {}
        for c, _, _ in st.values():
            key = "missing-header" if c.startswith("missing-header") else c
            cnt[key] = cnt.get(key, 0) + 1
        w(f"  {name}: the {len(st)} missing-header units with empty stubs: "
          + ", ".join(f"{k} {n}" for k, n in sorted(cnt.items(), key=lambda kv: -kv[1])) + "\n")
        for u, (c, d, _) in sorted(st.items()):
            if c == "unexplained":
                w(f"    {name} +stubs: unexplained: {u}: {d[:180]}\n")
    for name, cl in classes.items():
        hdrs: dict[str, int] = {}
        for c, _ in cl.values():
            if c.startswith("missing-header: "):
                h = c.split(": ", 1)[1]
                hdrs[h] = hdrs.get(h, 0) + 1
        if hdrs:
            w(f"  {name}: missing headers: " + ", ".join(f"{h} ({k})" for h, k in sorted(hdrs.items(), key=lambda kv: -kv[1])) + "\n")
        unexpl = [(u, d) for u, (c, d) in sorted(cl.items()) if c == "unexplained"]
        for u, d in unexpl[: a.show_unexplained if hasattr(a, "show_unexplained") else 15]:
            w(f"  {name}: unexplained: {u}: {d[:200]}\n")
        if len(unexpl) > 15:
            w(f"  {name}: ... {len(unexpl) - 15} more unexplained (see --tsv/--json)\n")
    if leftovers:
        top = list(leftovers["silent"].items())[:15]
        w(f"silent leftovers: {leftovers['silent_total']} occurrences of {len(leftovers['silent'])} CUDA names "
          f"(on lines without a diagnostic; {leftovers['diagnosed_total']} more on diagnosed lines; "
          f"{leftovers.get('project_defined_total', 0)} uses of names the project defines itself not counted)\n")
        if top:
            w("  " + ", ".join(f"{k} {v}" for k, v in top) + "\n")
        if leftovers["silent_by_library"]:
            w("  by library: " + ", ".join(f"{k} {v}" for k, v in leftovers["silent_by_library"].items()) + "\n")
    sys.stdout.flush()


def write_outputs(a, report, units, before, afters, classes) -> None:
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        summary = {}
        for name, res in afters.items():
            cl = classes[name]
            summary[name] = {
                "units": len(units), "compiled_before": sum(before[u].ok for u in units),
                "compiled_after": sum(res[u].ok for u in units),
                "missing_header": sum(1 for c, _ in cl.values() if c.startswith("missing-header")),
                "flagged": sum(1 for c, _ in cl.values() if c == "flagged"),
                "unexplained": sum(1 for c, _ in cl.values() if c == "unexplained"),
                "fixed": sum(1 for u in units if not before[u].ok and res[u].ok),
            }
            st = report.get("stubbed", {}).get(name) or {}
            if st:
                tally: dict[str, int] = {}
                for e in st.values():
                    k = "missing-header" if e["class"].startswith("missing-header") else e["class"]
                    tally[k] = tally.get(k, 0) + 1
                summary[name]["missing_header_units_with_stubs"] = tally
        report["summary"] = summary or {"nvcc as shipped": {"units": len(units), "compiled_before": sum(before[u].ok for u in units)}}
        a.json.write_text(json.dumps(report, indent=1, default=str))
    if a.tsv:
        a.tsv.parent.mkdir(parents=True, exist_ok=True)
        with a.tsv.open("w") as f:
            cols = ["unit", "before_rc", "before_first_error"]
            stub = report.get("stubbed", {})
            for name in afters:
                cols += [f"{name}: rc", f"{name}: class", f"{name}: detail / first error"]
                if stub.get(name):
                    cols += [f"{name}: with empty stubs for missing headers"]
            f.write("\t".join(cols) + "\n")
            for u in units:
                row = [u, str(before[u].rc), clean(before[u].first_error_text())]
                for name, res in afters.items():
                    c, d = classes[name].get(u, ("", ""))
                    if not c:
                        c = "ok" if res[u].ok else ("failed-before-too" if not before[u].ok else "")
                    row += [str(res[u].rc), c, clean(d or res[u].first_error_text())]
                    if stub.get(name):
                        e = stub[name].get(u)
                        row.append(clean(f"{e['class']} {e['detail']} (stubs: {' '.join(e['stubs'])})") if e else "")
                f.write("\t".join(row) + "\n")


def clean(s: str) -> str:
    return s.replace("\t", " ").replace("\n", " ")[:400]


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        kill_all()
        print("corpus_check: interrupted", file=sys.stderr)
        sys.exit(130)
