"""The tokenizer tests' corpus, built at test time: English prose, source code, and generated lines
from a fixed seed covering many scripts, emoji, contractions, digits, whitespace and punctuation."""
import pathlib
import random

ROOT = pathlib.Path(__file__).resolve().parents[2]
GPL = pathlib.Path("/usr/share/common-licenses/GPL-3")  # on every Debian system

LETTERS = [
    "café", "naïve", "résumé", "Zürich", "Ångström", "façade", "São", "Łódź", "ﬁne",
    "e\u0301clair", "αβγ", "Ελληνικά", "λέξη", "Привет", "мир", "ёжик", "Україна", "漢字",
    "かなカナ", "한국어", "中文分词", "東京都", "مرحبا", "بالعالم", "नमस्ते", "दुनिया", "שלום",
    "สวัสดี", "ქართული", "Հայերեն", "𝒜𝓁𝓅𝒽𝒶", "𐍈𐌰", "ǅemal", "ßtraße", "İstanbul", "Ωmega",
]
NUMBERS = ["٣٤٥", "१२३", "Ⅻ", "½", "²³", "𝟙𝟚", "１２３", "零", "৪২", "๓๔", "⑦"]
EMOJI = [
    "😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "❤️", "🇩🇪", "🧑🏿‍🚀", "🤖", "✨", "🙏🏻", "👩‍💻", "🫠",
]
CONTRACTIONS = [
    "it's", "we'll", "'S", "they're", "I'd", "you've", "I'm", "don't", "'ll'll", "O'Neil's",
    "it’s", "'sup", "rock'n'roll", "'tis", "'re'", "we'D", "'m'm",
]
# The JS encoder's \s code points, U+0085 (PCRE2's \s, not JS's), U+180E and U+200B (neither).
SPACES = [
    " ", "  ", "   ", "\t", "\t\t", "\r\n", "\n", "\n\n", "\x0b", "\x0c", "\r", "\u00a0",
    "\u1680", "\u2000", "\u2005", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
    "\ufeff", "\u0085", "\u180e", "\u200b", " \u00a0 ", "\t \n ",
]
PUNCTUATION = [
    ",", ".", "...", "?!", "--", "—", "“quoted”", "«»", "(x)", "[1]", "{}", "@#$%^&*", '","',
    "'],['", '"],"', "'.\",\"'", '.,"', "',,'", '), "', "<|endoftext|>", "<|endoftext", "|>",
    "->", "::", "==", "/*", "*/", "#!", "\\n", "¿¡", "§", "€100", "¥", "©®™",
]
# Where PCRE2's \s and JS's part (U+0085, U+180E, U+FEFF next to punctuation and spaces), the
# comma-keyed merge ranks of the JS encoder, and runs long enough to stress the regex engine.
EDGE_LINES = [
    "!\u0085", "a!\u0085 b", "x\u180e!", "!\u180e\u180e y", "a\ufeff b", "!\ufeff\ufeffz",
    "\u0085\u0085\u0085", "\ufeff", ' ","",', "'],['],[", '"],"],"', ".\",\".\",\"",
    "a" * 5000, " " * 3000 + "x", "ab1" * 2000, "\t \u3000" * 1000 + "!",
]
WORDS = ["the", "cat", "sat", "Hello", "world", "tokenizer", "GPT", "BPE", "x", "a", "I"]


def _generated_line(rng):
    pools = [LETTERS, NUMBERS, EMOJI, CONTRACTIONS, PUNCTUATION, WORDS, WORDS]
    parts = []
    for _ in range(rng.randint(2, 12)):
        pool = rng.choice(pools)
        parts.append(pool[rng.randrange(len(pool))])
        if rng.random() < 0.15:
            parts.append(str(rng.randrange(10 ** rng.randint(1, 20))))
        parts.append(rng.choice(SPACES) if rng.random() < 0.7 else rng.choice(PUNCTUATION))
    line = "".join(parts)
    if rng.random() < 0.3:
        line = rng.choice(SPACES) + line
    if rng.random() < 0.3:
        line = line.rstrip() if rng.random() < 0.5 else line + rng.choice(SPACES)
    return line


def _file_lines(path):
    return path.read_text(encoding="utf-8", errors="replace").split("\n")


def build(generated=3000, seed=20240601):
    """Corpus lines: every line of the repo's docs, README, GPL-3 and source files, some
    multi-line paragraphs, then `generated` random lines."""
    prose = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
    if GPL.exists():
        prose.append(GPL)
    code = sorted(p for folder in ("core", "python", "apps", "plugins", "tests")
                  for suffix in ("*.cpp", "*.h", "*.py", "*.cu", "*.cuh")
                  for p in (ROOT / folder).rglob(suffix))
    lines, seen = [], set()
    for path in prose + code:
        file_lines = _file_lines(path)
        for line in file_lines:
            if line not in seen:
                seen.add(line)
                lines.append(line)
        for start in range(0, len(file_lines), 40):  # newlines and blank lines inside one text
            lines.append("\n".join(file_lines[start:start + 6]))
    rng = random.Random(seed)
    lines.extend(EDGE_LINES)
    lines.extend(_generated_line(rng) for _ in range(generated))
    return lines
