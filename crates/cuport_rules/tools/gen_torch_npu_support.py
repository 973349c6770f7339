#!/usr/bin/env python3
"""Generates mappings/ascend/api-support/ from Ascend's published per-version
PyTorch API support lists (Ascend/pytorch, docs/zh/api/native_api/
pytorch_<version>/*.md): for every API, on which chips torch_npu supports
it, and what its restriction notes say.

Facts carried over: API names, the per-chip support marks, the version, the
dtype lists and the names of the APIs a note points to. The notes are not
copied: each is reduced to the kinds of restriction it states, written here
in our own words, with the source file to read for the details.

  python3 crates/cuport_rules/tools/gen_torch_npu_support.py \\
      --docs path/to/Ascend-pytorch/docs/zh/api/native_api --commit 9e73e708a

Writes one CSV per torch_npu version (api,supported_on,unsupported_on,
restricted,note,source) and index.toml (versions, chips, source commit).
Nothing else is read or run.
"""
from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

CHIPS = {
    "Atlas A2 训练系列产品": "A2",
    "Atlas A3 训练系列产品": "A3",
    "Ascend 950DT": "950DT",
    "Atlas 训练系列产品": "training",
    "Atlas 推理系列产品": "inference",
}
DTYPE = r"(?:bf16|fp16|fp32|fp64|float16|float32|float64|bfloat16|double|int8|int16|int32|int64|uint8|uint16|uint32|uint64|bool|complex32|complex64|complex128|hf32|fp8\w*|float8\w*)"
DTYPE_LIST = re.compile(rf"(`[\w.]+`)?\s*(?:仅|只)?支持\s*((?:{DTYPE}\s*[，,、和及/ ]*\s*)+)")
TICKED = re.compile(r"`([A-Za-z_][\w.]*(?:\([^`]*\))?)`")
SUPPORTED = {"✔", "&#10004;", "是"}
UNSUPPORTED = {"✘", "&#10008;", "否"}


def summarise(note: str) -> str:
    """The kinds of restriction a note states, in our own words."""
    text = re.sub(r"<[^>]+>", " ", note).strip()
    if not text or text == "-":
        return ""
    parts: list[str] = []
    for param, dtypes in DTYPE_LIST.findall(text):
        names = ", ".join(d for d in re.split(r"[，,、和及/ ]+", dtypes) if d)
        parts.append(f"{param + ' ' if param else ''}dtypes: {names}")
    if "回退" in text and "CPU" in text:
        parts.append("may fall back to the CPU")
    if "use_compatible_impl" in text:
        parts.append("torch_npu.npu.use_compatible_impl(True) selects PyTorch-compatible behaviour")
    if "建议使用" in text or "请使用" in text or "替换" in text:
        suggested = [t for t in TICKED.findall(text) if t.startswith("torch")]
        if suggested:
            parts.append("use " + ", ".join(f"`{s}`" for s in dict.fromkeys(suggested)) + " instead")
    if "精度" in text:
        parts.append("precision differs from the CUDA result")
    if "确定性" in text:
        parts.append("determinism differs")
    if "不支持" in text or "仅支持" in text or "只支持" in text or "取值" in text or "约束" in text:
        typed = {param.strip("`") for param, _ in DTYPE_LIST.findall(text)}
        params = [t for t in TICKED.findall(text) if not t.startswith("torch") and t not in typed]
        if params:
            parts.append("restricted arguments: " + ", ".join(f"`{p}`" for p in dict.fromkeys(params)))
    covered = DTYPE_LIST.sub("", text)
    covered = re.sub(r"可能回退至CPU执行|[，。,.;；\s`]", "", covered)
    if covered and not parts[-1:] == ["see the source for details"]:
        parts.append("see the source for details")
    return "; ".join(dict.fromkeys(parts))


def api_name(line: str) -> str | None:
    """The API a `**原生文档**` (PyTorch documentation) link names: the
    anchor `#<qualified name>` (methods share their class's page), else the
    link text where it names something on the page (`torch.nn.Module.npu`
    links to torch.nn.Module's page), else the page
    `generated/<qualified name>.html`, else the link text."""
    valid = lambda name: name if name and re.fullmatch(r"torch(\.[A-Za-z_]\w*)+", name) else None
    anchor = re.search(r"\.html#(torch(?:\.[A-Za-z_]\w*)+)\)", line)
    page = re.search(r"generated/([A-Za-z_][\w.]*?)\.html", line)
    text = re.search(r"\[([^\]]+)\]", line)
    written = text.group(1).strip().strip("`") if text else ""
    if written.startswith("Tensor."):
        written = "torch." + written
    if anchor:
        return valid(anchor.group(1))
    if page and valid(written) and written.startswith(page.group(1) + "."):
        return written
    return valid(page.group(1) if page else written)


def sections(path: Path):
    """(api, {chip: supported}, note) for each API section: one starts at
    its PyTorch documentation link (`**原生文档**`), which every section
    has whatever its heading looks like."""
    api, marks, note, in_note = None, {}, [], False
    for line in path.read_text(encoding="utf-8").splitlines() + ["**原生文档**"]:
        if "**原生文档**" in line:
            if api:
                yield api, marks, " ".join(note)
            api, marks, note, in_note = api_name(line), {}, [], False
            continue
        row = re.match(r"\|\s*<term>([^<]+)</term>\s*\|\s*([^|]+?)\s*\|", line)
        if row and api:
            chip = CHIPS.get(row.group(1).strip())
            if chip and row.group(2) in SUPPORTED | UNSUPPORTED:
                marks[chip] = row.group(2) in SUPPORTED
            continue
        if "**限制与说明**" in line:
            in_note = True
            note.append(line.split("**限制与说明**", 1)[1].lstrip("：: "))
        elif line.startswith("</div>") or line.startswith("#") or line.startswith("> <font"):
            in_note = False
        elif in_note and line.strip():
            note.append(line.strip())


def write_list(path: Path, rows: dict[str, dict]) -> None:
    """One release's list, sorted by API (the format the loader reads)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["api", "supported_on", "unsupported_on", "restricted", "note", "source"], lineterminator="\n")
        writer.writeheader()
        for api in sorted(rows):
            writer.writerow(rows[api])


def version_of(directory: Path) -> str | None:
    m = re.fullmatch(r"pytorch_(\d+)-(\d+)-(\d+)", directory.name)
    return ".".join(m.groups()) if m else None


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--docs", required=True, type=Path, help="docs/zh/api/native_api of an Ascend/pytorch checkout")
    p.add_argument("--commit", required=True, help="the checkout's commit (recorded as the source)")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[3] / "mappings/ascend/api-support")
    a = p.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    versions = []
    chips_seen: set[str] = set()
    for directory in sorted(a.docs.glob("pytorch_*")):
        version = version_of(directory)
        if not version:
            continue
        rows = {}
        for md in sorted(directory.glob("*.md")):
            for api, marks, note in sections(md):
                if not marks:
                    continue
                if api in rows:
                    print(f"{directory.name}/{md.name}: {api} listed twice; the later entry is kept", file=sys.stderr)
                chips_seen.update(marks)
                summary = summarise(note)
                rows[api] = {
                    "api": api,
                    "supported_on": ";".join(c for c, ok in marks.items() if ok),
                    "unsupported_on": ";".join(c for c, ok in marks.items() if not ok),
                    "restricted": "yes" if summary else "",
                    "note": summary,
                    "source": f"{directory.name}/{md.name}",
                }
        if not rows:
            continue
        path = a.out / f"torch_npu-{version}.csv"
        write_list(path, rows)
        versions.append((version, len(rows)))
        print(f"torch_npu {version}: {len(rows)} APIs -> {path}", file=sys.stderr)
    order = [c for c in CHIPS.values() if c in chips_seen]
    index = [
        "# GENERATED by crates/cuport_rules/tools/gen_torch_npu_support.py; do not edit.",
        "# Per-version torch API support on Ascend NPUs, from Ascend/pytorch's published lists.",
        'adapter = "torch_npu"',
        f'source = "Ascend/pytorch @{a.commit}, docs/zh/api/native_api/pytorch_<version>/*.md"',
        'reference = "https://gitee.com/ascend/pytorch (docs/zh/api/native_api)"',
        f"chips = [{', '.join(repr(c).replace(chr(39), chr(34)) for c in order)}]",
        "",
    ]
    for version, count in versions:
        index += ["[[version]]", f'release = "{version}"', f'file = "torch_npu-{version}.csv"', f"apis = {count}", ""]
    (a.out / "index.toml").write_text("\n".join(index), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
