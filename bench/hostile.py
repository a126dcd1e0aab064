"""Hostile documents, built on demand: what an attacker would upload to a lab server (docs/security.md).

Each builder writes real files into a folder it is given and returns the path to upload. The canary is a
file outside the upload whose unique token must never appear in any output.
"""
from __future__ import annotations

import io
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

SENTENCE = "Citation recommendation ranks the papers a draft should cite by their text and their graph."


def canary(folder: Path) -> tuple[Path, str]:
    """A secret file (a .tex and a .bib holding one token) outside any upload: (the .tex path, the token)."""
    token = f"CANARY{uuid.uuid4().hex}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "secret.tex").write_text(f"The server's secret {token} shows what graphs do \\cite{{?}}.\n",
                                       encoding="utf-8")  # a placeholder: its context is in every review
    (folder / "secret.bib").write_text(
        f"@article{{{token}, title={{{token}}}, author={{Secret, A.}}, year={{2020}}}}\n", encoding="utf-8")
    return folder / "secret.tex", token


def _latex(body: str, bibliography: str = "") -> str:
    return ("\\documentclass{article}\n\\title{A hostile draft}\n\\begin{document}\n\\maketitle\n" + body + "\n"
            + bibliography + "\\end{document}\n")


def _zip(path: Path, files: dict[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def recursion_bomb(folder: Path, fanout: int = 10) -> Path:
    """A zip: main.tex inputs a.tex `fanout` times, a.tex holds a sentence and inputs itself `fanout` times."""
    folder.mkdir(parents=True, exist_ok=True)
    inputs = "".join("\\input{a}\n" for _ in range(fanout))
    return _zip(folder / "bomb.zip", {"main.tex": _latex(inputs), "a.tex": SENTENCE + "\n" + inputs})


def include_tree(folder: Path, fanout: int = 10, depth: int = 9) -> Path:
    """A zip without any loop: each file inputs the next `fanout` times, `depth` files deep (fanout**depth
    copies of the last file if all were followed)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {"main.tex": _latex("".join("\\input{f1}\n" for _ in range(fanout)))}
    for level in range(1, depth + 1):
        nested = "".join(f"\\input{{f{level + 1}}}\n" for _ in range(fanout)) if level < depth else ""
        files[f"f{level}.tex"] = f"{SENTENCE} Level {level}.\n{nested}"
    return _zip(folder / "tree.zip", files)


def outside_includes(folder: Path, secret: Path) -> Path:
    """A .tex (with its folder) that names the secret by absolute path, by `../` and through a link."""
    folder.mkdir(parents=True, exist_ok=True)
    up = "../" * len(folder.resolve().parts) + str(secret.resolve()).lstrip("/")
    (folder / "link.tex").symlink_to(secret.resolve())
    (folder / "linked.bib").symlink_to(secret.with_suffix(".bib").resolve())
    body = (f"{SENTENCE} \\cite{{x}}\\nocite{{*}}\n\n\\input{{{secret.resolve()}}}\n\\input{{{up}}}\n"
            f"\\include{{{up[:-4]}}}\n\\input{{link}}\n\\input{{/etc/hostname}}\n")
    bibs = (f"\\bibliography{{{secret.with_suffix('').resolve()},{up[:-4]},linked}}\n"
            f"\\addbibresource{{{secret.with_suffix('.bib').resolve()}}}\n")
    path = folder / "main.tex"
    path.write_text(_latex(body, bibs), encoding="utf-8")
    return path


def outside_includes_zip(folder: Path, secret: Path) -> Path:
    """The same names as `outside_includes`, in a zipped project."""
    folder.mkdir(parents=True, exist_ok=True)
    up = "../" * 12 + str(secret.resolve()).lstrip("/")
    body = f"{SENTENCE} \\cite{{x}}\n\n\\input{{{secret.resolve()}}}\n\\input{{{up}}}\n\\input{{../secret}}\n"
    bibs = f"\\bibliography{{{secret.with_suffix('').resolve()},../secret}}\n"
    return _zip(folder / "outside.zip", {"paper/main.tex": _latex(body, bibs)})


def many_citations(folder: Path, count: int = 1000) -> Path:
    """One paragraph with `count` citations (about 94 bytes each), with a .bib of the keys."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    words = "citation recommendation graph neural retrieval ranking model learning embedding document".split()
    body = " ".join(" ".join(rng.choice(words) for _ in range(10)).capitalize() + f" \\cite{{k{i}}}."
                    for i in range(count))
    (folder / "refs.bib").write_text("\n".join(f"@article{{k{i}, title={{Paper {i}}}, author={{Author, A.}}, "
                                               "year={2020}}" for i in range(count)), encoding="utf-8")
    path = folder / "cites.tex"
    path.write_text(_latex(body, "\\bibliography{refs}\n"), encoding="utf-8")
    return path


def big_tex_archive(folder: Path, megabytes: int = 90) -> Path:
    """A .tar.gz (a few hundred KB) whose main.tex unpacks to `megabytes` MB."""
    folder.mkdir(parents=True, exist_ok=True)
    line = (SENTENCE + "\n").encode()
    body = line * (megabytes * 1024 * 1024 // len(line))
    data = _latex("").encode().replace(b"\\end{document}", body + b"\\end{document}")
    path = folder / "big.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo("main.tex")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return path


def big_markdown(folder: Path, megabytes: int = 49) -> Path:
    """A Markdown file just under the upload limit: `megabytes` MB of short paragraphs."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "big.md"
    paragraph = ("# A heading\n\n" + SENTENCE + "\n\n").encode()
    path.write_bytes(paragraph * (megabytes * 1024 * 1024 // len(paragraph)))
    return path


def word_file(path: Path, document_xml: bytes | None = None, chunks=None) -> Path:
    """A Word file from python-docx's own template with word/document.xml replaced (by bytes, or streamed from
    `chunks` so that a huge part is never held)."""
    import docx

    template = io.BytesIO()
    docx.Document().save(template)
    with zipfile.ZipFile(template) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            if info.filename != "word/document.xml":
                target.writestr(info, source.read(info))
            elif document_xml is not None:
                target.writestr(info.filename, document_xml)
            else:
                with target.open(info.filename, "w", force_zip64=True) as handle:
                    for chunk in chunks:
                        handle.write(chunk)
    return path


_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def docx_text_bomb(folder: Path, megabytes: int = 1536) -> Path:
    """A Word file whose text part unpacks to `megabytes` MB (one paragraph repeated)."""
    folder.mkdir(parents=True, exist_ok=True)
    paragraph = f"<w:p><w:r><w:t>{SENTENCE}</w:t></w:r></w:p>".encode()
    block = paragraph * (1024 * 1024 // len(paragraph))

    def chunks():
        yield f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {_W}><w:body>'.encode()
        for _ in range(megabytes):
            yield block
        yield b"</w:body></w:document>"

    return word_file(folder / "bomb.docx", chunks=chunks())


def docx_many_paragraphs(folder: Path, count: int = 3_000_000) -> Path:
    """A small Word file of `count` empty paragraphs."""
    folder.mkdir(parents=True, exist_ok=True)
    xml = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {_W}><w:body>'.encode()
           + b"<w:p/>" * count + b"</w:body></w:document>")
    return word_file(folder / "paragraphs.docx", xml)


def long_pdf(folder: Path, pages: int = 2000) -> Path:
    """A PDF of `pages` pages, each two paragraphs of dense text."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "long.pdf"
    pdf = canvas.Canvas(str(path), pagesize=A4)
    for page in range(pages):
        y = 800
        for paragraph in range(2):
            for line in range(22):
                pdf.drawString(50, y, f"{SENTENCE[:80]} {page}.{paragraph}.{line}")
                y -= 14
            y -= 20
        pdf.showPage()
    pdf.save()
    return path


@dataclass
class Outcome:
    """How a command ended: exit code, output, wall time and its own peak memory."""

    code: int
    out: str
    err: str
    seconds: float
    peak_mb: float

    def shows(self, text: str) -> bool:
        return text in self.out or text in self.err


# Runs a module as `python -m` would, then writes the process's own peak memory (VmHWM: the new program's alone;
# getrusage would count the parent's pages copied at fork) to the file named in CITREC_PEAK_FILE.
_WRAPPER = """
import atexit, os, resource, runpy, sys
def peak():
    try:
        with open("/proc/self/status") as status:
            kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with open(os.environ["CITREC_PEAK_FILE"], "w") as out:
        out.write(str(kb))
atexit.register(peak)
sys.argv = sys.argv[1:]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def measured(module: str, *args: str, timeout: float = 300) -> Outcome:
    """Run `python -m MODULE ARGS` (HF_HUB_OFFLINE set) and measure it: wall time and its own peak memory."""
    with tempfile.TemporaryDirectory() as folder:
        peak = Path(folder) / "peak"
        start = time.monotonic()
        try:
            done = subprocess.run([sys.executable, "-c", _WRAPPER, module, *args], capture_output=True,
                                  timeout=timeout, env={**os.environ, "HF_HUB_OFFLINE": "1",
                                                        "CITREC_PEAK_FILE": str(peak)})
        except subprocess.TimeoutExpired as exc:
            return Outcome(-9, (exc.stdout or b"").decode("utf-8", "replace"),
                           (exc.stderr or b"").decode("utf-8", "replace"), time.monotonic() - start, float("nan"))
        seconds = time.monotonic() - start
        peak_mb = int(peak.read_text()) / 1024 if peak.exists() else float("nan")
    return Outcome(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"),
                   seconds, peak_mb)


def review(document: Path, index: Path, *extra: str, timeout: float = 300) -> Outcome:
    """`python -m recommender review DOCUMENT --index INDEX --json -` as a separate, measured process."""
    return measured("recommender", "review", str(document), "--index", str(index), "--json", "-", *extra,
                    timeout=timeout)
