"""The BM25 analyzer: English stemming and stopwords, jieba for Chinese, mixed text."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragstream.common.text.analyzer import analyze


def test_english_is_stemmed_without_stopwords() -> None:
    assert analyze("The runners were running quickly to the studies") == [
        "runner",
        "run",
        "quick",
        "studi",
    ]


def test_english_inflections_share_a_term() -> None:
    assert analyze("connection") == analyze("connected") == analyze("connecting") == ["connect"]


def test_hyphens_split_and_numbers_stay() -> None:
    assert analyze("COVID-19 and type 2 diabetes; 3.5 mg") == [
        "covid",
        "19",
        "type",
        "2",
        "diabet",
        "3",
        "5",
        "mg",
    ]


def test_possessives_and_contractions() -> None:
    assert analyze("Scrooge's clerk didn't say O'Brien’s name") == [
        "scroog",
        "clerk",
        "say",
        "o",
        "brien",
        "name",
    ]


def test_full_width_forms_are_normalized() -> None:
    assert analyze("ＣＯＶＩＤ－１９") == ["covid", "19"]


def test_chinese_is_segmented_into_words() -> None:
    assert analyze("北京大学的学生在图书馆学习") == ["北京大学", "学生", "图书馆", "学习"]


def test_chinese_punctuation_and_stopwords_are_dropped() -> None:
    terms = analyze("我们的研究表明：这个方法是有效的！")
    assert "研究" in terms
    assert "方法" in terms
    assert not {"我们", "的", "这个", "是", "：", "！"} & set(terms)


def test_mixed_text() -> None:
    assert analyze("我爱machine learning和自然语言处理, running BERT模型") == [
        "爱",
        "machin",
        "learn",
        "自然语言",
        "处理",
        "run",
        "bert",
        "模型",
    ]


def test_unassigned_code_points_in_the_han_blocks_separate_words() -> None:
    assert analyze("\ufada") == []
    assert analyze("学生\ufada\ufadb老师") == analyze("学生 老师")
    assert analyze("学生\ufada\ufadb老师") != []


def test_only_punctuation_and_stopwords_give_nothing() -> None:
    assert analyze("") == []
    assert analyze(" ... !!! -- ，。") == []
    assert analyze("the of and 的 了") == []


@settings(max_examples=80, deadline=None)
@given(st.text())
@example("\ufada")
def test_terms_are_letters_and_digits(text: str) -> None:
    for term in analyze(text):
        assert term
        assert all(char.isalnum() for char in term), term


@settings(max_examples=80, deadline=None)
@given(st.text())
@example("Don't o'brien's rock'n'roll\u2019s ʼ's")
def test_an_ideograph_run_leaves_the_terms_of_the_text_before_it(text: str) -> None:
    # Text is analyzed stretch by stretch between ideograph runs: a run added after it
    # must leave the text's own terms as they were.
    assert analyze(text) == analyze(text + " 中")[:-1]


def test_terms_stay_whole_in_a_unicode_tokenizer() -> None:
    """Backends index the terms joined by spaces with a plain Unicode tokenizer."""
    texts = ["北京大学的学生在图书馆学习", "Covid-19 vaccines for naïve T cells", "数据库 RAG检索"]
    expected = {term for text in texts for term in analyze(text)}
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(terms, tokenize='unicode61 remove_diacritics 0')")
    db.executemany("INSERT INTO t(terms) VALUES (?)", [(" ".join(analyze(t)),) for t in texts])
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
    assert {row[0] for row in db.execute("SELECT term FROM v")} == expected


def test_concurrent_use_gives_the_same_terms() -> None:
    texts = ["北京大学的学生在图书馆学习", "running studies of connected networks"] * 20
    expected = [analyze(text) for text in texts]
    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(analyze, texts)) == expected


def in_fresh_interpreter(code: str) -> subprocess.CompletedProcess[str]:
    """Runs `code` in a new Python process, where no test has loaded jieba yet."""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    return result


def test_jieba_loads_lazily_once_and_quietly() -> None:
    """A fresh process: jieba is not imported until Chinese text arrives, then eight threads
    race to load it; it loads without log lines and every thread gets the same words."""
    code = (
        "import sys\n"
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from ragstream.common.text.analyzer import analyze\n"
        "assert analyze('plain English text') == ['plain', 'english', 'text']\n"
        "assert 'jieba' not in sys.modules\n"
        "with ThreadPoolExecutor(max_workers=8) as pool:\n"
        "    results = list(pool.map(analyze, ['北京大学的学生'] * 8))\n"
        "print(results[0] if all(r == results[0] for r in results) else results)\n"
    )
    result = in_fresh_interpreter(code)
    assert result.stdout.strip() == "['北京大学', '学生']"
    assert result.stderr == ""


def test_preloading_the_segmenter_loads_it_once_off_the_calling_thread() -> None:
    code = (
        "import threading\n"
        "from ragstream.common.text import analyzer\n"
        "analyzer.preload_segmenter()\n"
        "analyzer.preload_segmenter()\n"
        "loaders = [t for t in threading.enumerate() if t.name == 'ragstream-jieba']\n"
        "print(len(loaders))\n"
        "for loader in loaders:\n"
        "    loader.join()\n"
        "print(analyzer._JIEBA._cut is not None, analyzer.analyze('北京大学的学生'))\n"
    )
    assert in_fresh_interpreter(code).stdout.splitlines() == ["1", "True ['北京大学', '学生']"]
