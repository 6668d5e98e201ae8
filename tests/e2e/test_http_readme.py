"""The README's curl examples, run as written (only the address changes) against a server
holding the demo corpus in workspace `demo`, as `make demo` indexes it.

Each example's comment names it; every example needs a check here, and every check an
example, so the README cannot show a call nobody has run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import DEMO_CORPUS
from tests.support.server import REPO, ServeProcess

pytestmark = pytest.mark.e2e
README_ADDRESS = "127.0.0.1:8080"
Check = Callable[[int, str], None]


def examples() -> list[tuple[str, str]]:
    """(label, command) of each curl in the README's http-examples block."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- http-examples", 1)[1].split("<!-- /http-examples -->", 1)[0]
    found, label = [], ""
    for chunk in re.split(r"\n(?=# |curl )", block.split("```sh", 1)[1].split("```", 1)[0]):
        if chunk.startswith("# "):
            label = chunk[2:].split(":", 1)[0].strip()
        elif chunk.startswith("curl "):
            found.append((label, chunk.strip()))
    return found


def ok(body: str) -> Any:
    return json.loads(body)


def check_query(status: int, body: str) -> None:
    reply = ok(body)
    assert status == 200 and reply["answer"].strip() and reply["references"]
    assert "2024-tern-s3-recall-notice.txt" in {r["docId"] for r in reply["contextReferences"]}
    # The references are the passages the answer's markers cite.
    cited = set(re.findall(r"\[(\d+)\]", reply["answer"]))
    assert {r["referenceId"] for r in reply["references"]} == cited


def check_retrieve(status: int, body: str) -> None:
    reply = ok(body)
    assert status == 200 and reply["mode"] == "QUERY_MODE_LOCAL"
    assert "Halvorsen Aquatics" in {e["name"] for e in reply["context"]["entities"]}
    assert reply["context"]["chunks"] and "answer" not in reply


def check_stream(status: int, body: str) -> None:
    events = re.findall(r"^event: (\w+)$", body, re.M)
    assert status == 200 and events[0] == "context" and events[-1] == "end"
    assert "delta" in events and "Skua 3" in body


def check_publish(status: int, body: str) -> None:
    [result] = ok(body)["results"]
    assert status == 200 and result["docId"] == "notes/ningbo-visit.md" and int(result["version"])


def check_status(status: int, body: str) -> None:
    documents = ok(body)["documents"]
    assert status == 200 and [d["docId"] for d in documents] == [
        "company-overview.md",
        "leadership-team.md",
    ]
    assert {d["state"] for d in documents} == {"DOCUMENT_STATE_PROCESSED"}


def check_progress(status: int, body: str) -> None:
    assert status == 200 and set(ok(body)) == {"pendingDocumentEvents", "pendingGraphMerges"}


def check_list(status: int, body: str) -> None:
    reply = ok(body)
    assert status == 200 and len(reply["documents"]) == 5 and reply["nextPageToken"]


def check_upload(status: int, body: str) -> None:
    reply = ok(body)
    [result] = reply["results"]
    assert status == 200 and result["docId"] == "company-overview.md"
    assert result["outcome"] == "PUBLISH_OUTCOME_DUPLICATE"
    assert reply["converted"]["format"] == "markdown"


def check_delete(status: int, body: str) -> None:
    assert status == 200 and ok(body)["results"][0]["docId"] == "notes/ningbo-visit.md"


def check_search(status: int, body: str) -> None:
    hits = {h["entity"]["name"]: h["entity"]["type"] for h in ok(body)["hits"]}
    assert status == 200 and hits["Halvorsen Aquatics"] == "organization"


def check_entity(status: int, body: str) -> None:
    reply = ok(body)
    assert status == 200 and reply["entity"]["degree"] > 40 and reply["chunks"]
    assert "company-overview.md" in reply["entity"]["sourceDocIds"]


def check_relation(status: int, body: str) -> None:
    relation = ok(body)["relation"]
    assert status == 200 and relation["sourceKey"] == "halvorsen aquatics"
    assert relation["targetName"] == "Ingrid Halvorsen" and relation["description"]


def check_neighbourhood(status: int, body: str) -> None:
    reply = ok(body)
    names = {n["entity"]["name"] for n in reply["nodes"]}
    assert status == 200 and len(names) == 60 and reply["nodes"][0]["hops"] == 0
    assert {"Ingrid Halvorsen", "Tomasz Brejcha", "Skua 3", "Tern S3", "Gannet Fleet"} <= names


def check_stats(status: int, body: str) -> None:
    reply = ok(body)
    assert status == 200 and int(reply["entityCount"]) > 80 and int(reply["relationCount"]) > 100
    assert reply["topEntities"][0]["name"] == "Halvorsen Aquatics"


def check_communities(status: int, body: str) -> None:
    communities = ok(body)["communities"]
    assert status == 200 and 3 <= len(communities) <= 10 and communities[0]["level"] == 0
    ratings = [c["report"]["rating"] for c in communities]
    assert ratings == sorted(ratings, reverse=True)
    assert all(c["report"]["title"] and c["report"]["summary"] for c in communities)


def check_community(status: int, body: str) -> None:
    community = ok(body)["community"]
    assert status == 200 and community["level"] == 0
    assert "skjervik havbruk" in community["entityKeys"]
    assert len(community["entityKeys"]) == community["size"]
    assert community["report"]["summary"] and community["report"]["findings"]


def check_entity_communities(status: int, body: str) -> None:
    reply = ok(body)
    assert status == 200 and reply["entityKey"] == "tern s3" and reply["communities"]
    assert [c["level"] for c in reply["communities"]] == list(range(len(reply["communities"])))


def check_invalid(status: int, body: str) -> None:
    reply = ok(body)
    assert status == 400 and reply["code"] == 3
    assert reply["details"][0]["fieldViolations"][0]["field"] == "params.top_k"


CHECKS: dict[str, Check] = {
    "query": check_query,
    "retrieve": check_retrieve,
    "stream": check_stream,
    "publish": check_publish,
    "status": check_status,
    "progress": check_progress,
    "list": check_list,
    "upload": check_upload,
    "delete": check_delete,
    "search entities": check_search,
    "entity": check_entity,
    "relation": check_relation,
    "neighbourhood": check_neighbourhood,
    "stats": check_stats,
    "communities": check_communities,
    "community": check_community,
    "entity communities": check_entity_communities,
    "invalid body": check_invalid,
}


def run(command: str, address: str, out: Path) -> tuple[int, str]:
    """The command as the README writes it, at `address`; (HTTP status, body)."""
    shell = command.replace(README_ADDRESS, address)
    shell += f" -o {out} -w '%{{http_code}}'"
    env = {k: v for k, v in os.environ.items() if k != "RAGSTREAM_TOKEN"}
    done = subprocess.run(
        ["bash", "-c", shell],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
        cwd=REPO,  # the examples name files of the repository
    )
    assert done.returncode == 0, f"{shell}\n{done.stderr}"
    return int(done.stdout), out.read_text(encoding="utf-8")


def test_every_readme_example_has_a_check() -> None:
    assert [label for label, _ in examples()] == list(CHECKS)


def test_the_readme_curl_examples_work_on_the_demo_data(
    demo_http_server: ServeProcess, tmp_path: Path
) -> None:
    assert demo_http_server.http_address is not None and DEMO_CORPUS.is_dir()
    for index, (label, command) in enumerate(examples()):
        status, body = run(command, demo_http_server.http_address, tmp_path / f"{index}.out")
        try:
            CHECKS[label](status, body)
        except (AssertionError, KeyError, ValueError) as exc:
            raise AssertionError(f"README example {label!r} ({status}): {body[:1500]}") from exc
