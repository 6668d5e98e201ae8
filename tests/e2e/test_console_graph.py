"""The console's graph explorer in headless Chromium against a server holding the demo
corpus: the depth-2 neighbourhood of the best-connected entity drawn with no two labels
overlapping (the boxes sigma.js drew them in, read from the page), a legend and type
filters; a Chinese name drawn in real glyphs, not missing-glyph boxes; the community list,
a community's report with its members highlighted, and colouring by community; search as
you type and a relation named on hover.

Screenshots go to tests/output/console/ (ignored by git; CI keeps it as an artifact).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_console import OUTPUT, console
from tests.support.browser import BrowserError, Page
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
HUB = "halvorsen aquatics"
VIEW = "window.ragstreamGraph"
CJK = r"/[\u3400-\u9fff]/"
DIMMED = "#e3e6ec"

INK = """(canvas, x, y, w, h) => {
  const r = canvas.width / canvas.clientWidth;
  const data = canvas.getContext('2d').getImageData(x * r, y * r, w * r, h * r).data;
  const alpha = []; for (let i = 3; i < data.length; i += 4) alpha.push(data[i]);
  return alpha;
}"""
GLYPHS = f"""(() => {{
  // The pixels sigma drew for a Chinese label, beside the same label drawn off screen in
  // the same font twice: as it is, and with each Chinese character replaced by U+0378, a
  // code point no font has (what the label would look like if no font had those either).
  const ink = {INK};
  const view = {VIEW};
  const box = view.labelBoxes().find((b) => !b.selected && {CJK}.test(b.label));
  const shown = ink(view.labelCanvas(), box.x, box.y, box.width, box.height);
  const draw = (text) => {{
    const canvas = document.createElement('canvas');
    canvas.width = Math.ceil(box.width) + 4; canvas.height = Math.ceil(box.height) + 4;
    const context = canvas.getContext('2d');
    context.font = view.renderer.getSetting('labelWeight') + ' '
      + view.renderer.getSetting('labelSize') + 'px ' + view.renderer.getSetting('labelFont');
    context.textBaseline = 'top';
    context.fillText(text, 0, 0);
    const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
    const alpha = []; for (let i = 3; i < data.length; i += 4) alpha.push(data[i]);
    return alpha;
  }};
  const inked = (alpha) => alpha.filter((a) => a > 0).length;
  const real = draw(box.label), missing = draw(box.label.replace(/[\\u3400-\\u9fff]/g, '\\u0378'));
  return {{
    label: box.label, box,
    shownInk: inked(shown), shownLevels: new Set(shown).size,
    realInk: inked(real), missingInk: inked(missing),
    same: real.every((a, i) => a === missing[i]),
  }};
}})()"""
OVERLAPS = f"""(() => {{
  const boxes = {VIEW}.labelBoxes();
  const hits = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {{
    const a = boxes[i], b = boxes[j];
    if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height)
      hits.push([a.label, b.label]);
  }}
  return hits;
}})()"""
EDGE_MIDDLES = f"""(() => {{
  // The middles of drawn relations that no node is near, where hovering finds the relation.
  const view = {VIEW};
  const at = Object.fromEntries(view.keys().map((k) => [k, view.positionOf(k)]));
  const found = [];
  for (const edge of view.graph.edges()) {{
    const [s, t] = view.graph.extremities(edge);
    if (!at[s] || !at[t]) continue;
    const m = {{ x: (at[s].x + at[t].x) / 2, y: (at[s].y + at[t].y) / 2 }};
    const clear = Object.values(at).every((p) => Math.hypot(p.x - m.x, p.y - m.y) > 30);
    const long = Math.hypot(at[s].x - at[t].x, at[s].y - at[t].y) > 120;
    if (clear && long) found.push({{ edge, ...m }});
  }}
  return found;
}})()"""


def js(value: object) -> str:
    return json.dumps(value)


async def open_best_connected(page: Page) -> None:
    await page.evaluate("document.getElementById('depth').value = '2'")
    first = "#top-entities button"
    await page.wait_for(f"document.querySelector({js(first)})?.dataset.key === {js(HUB)}")
    await page.click(first)
    await page.wait_for(f"{VIEW}.container.dataset.centre === {js(HUB)}")
    await page.wait_for(f"{VIEW}.labelBoxes().length > 0")


async def check_labels_and_legend(page: Page) -> None:
    assert await page.evaluate(f"{VIEW}.graph.order") == 60  # max nodes
    boxes: list[dict[str, Any]] = await page.evaluate(f"{VIEW}.labelBoxes()")
    assert len(boxes) >= 15, boxes
    assert await page.evaluate(OVERLAPS) == []
    # The selected node's label, in its box on sigma's hover layer, and those sigma's
    # label grid chose to show.
    assert [b["key"] for b in boxes if b.get("selected")] == [HUB]
    shown = await page.evaluate(f"[...{VIEW}.renderer.displayedNodeLabels]")
    assert {b["key"] for b in boxes if not b.get("selected")} <= set(shown)
    types = await page.evaluate(f"Object.keys({VIEW}.types())")
    legend = await page.evaluate(
        "[...document.querySelectorAll('.legend-types input')].map(i => i.dataset.type)"
    )
    assert len(types) >= 3 and sorted(legend) == sorted(types)
    assert await page.evaluate("document.querySelectorAll('.legend-types .swatch').length") == len(
        types
    )


CJK_LABEL = "/[\\u3400-\\u9fff]/"
CJK_KEYS = f"""{VIEW}.graph.nodes()
  .filter((k) => {CJK_LABEL}.test({VIEW}.graph.getNodeAttribute(k, 'label')))
  .sort((a, b) => {VIEW}.graph.degree(b) - {VIEW}.graph.degree(a))"""
CJK_SHOWN = f"{VIEW}.labelBoxes().some((b) => !b.selected && {CJK_LABEL}.test(b.label))"


async def open_where_a_chinese_label_shows(page: Page) -> None:
    """Unless the view already draws a Chinese label, opens the Chinese-named entities of the
    view (best connected first, as a user would, through the search) until one's
    neighbourhood draws another's label."""
    if await page.evaluate(CJK_SHOWN):
        return
    for key in await page.evaluate(CJK_KEYS):
        label = await page.evaluate(f"{VIEW}.graph.getNodeAttribute({js(key)}, 'label')")
        await page.type("#entity-query", label)
        hit = f"#entity-hits-list [data-key={json.dumps(key, ensure_ascii=False)}]"
        await page.wait_for(f"document.querySelector({js(hit)}) !== null")
        await page.click(hit)
        await page.wait_for(f"{VIEW}.container.dataset.centre === {js(key)}")
        await page.wait_for(f"{VIEW}.labelBoxes().length > 0")
        if await page.evaluate(CJK_SHOWN):
            return
    raise AssertionError("no neighbourhood of a Chinese-named entity draws a Chinese label")


async def check_chinese_label(page: Page) -> None:
    await open_where_a_chinese_label_shows(page)
    glyphs = await page.evaluate(GLYPHS)
    # Real glyphs differ from missing-glyph boxes, and what sigma drew looks like the real
    # glyphs: ink of many levels (antialiased strokes), as much as the real rendering has.
    assert not glyphs["same"], glyphs
    assert glyphs["shownLevels"] > 8, glyphs
    shown, real, missing = glyphs["shownInk"], glyphs["realInk"], glyphs["missingInk"]
    assert abs(shown - real) < abs(shown - missing), glyphs


async def check_type_filter(page: Page) -> None:
    person = ".legend-types input[data-type=person]"
    await page.click(person)
    hidden = await page.evaluate(
        f"{VIEW}.keys().filter(k => {VIEW}.renderer.getNodeDisplayData(k).hidden)"
        f".map(k => {VIEW}.graph.getNodeAttribute(k, 'entityType'))"
    )
    assert hidden and set(hidden) == {"person"}
    await page.click(person)
    assert await page.evaluate(f"{VIEW}.hiddenTypes.size") == 0


async def check_communities(page: Page) -> None:
    titles = await page.wait_for(
        "[...document.querySelectorAll('#community-list button')].map(b => b.textContent)"
    )
    assert len(titles) >= 3 and all(titles)
    by_type = await page.evaluate(f"{VIEW}.colours()")
    await page.click("#colour-by-community")
    await page.wait_for(f"{VIEW}.container.dataset.colourBy === 'community'")
    by_community = await page.evaluate(f"{VIEW}.colours()")
    changed = [k for k in by_type if by_type[k] != by_community[k]]
    assert len(changed) > len(by_type) / 3 and len(set(by_community.values())) >= 3
    communities = await page.evaluate(
        f"Object.fromEntries([...{VIEW}.communityOf].map(([k, c]) => [k, c.id]))"
    )
    for key, colour in by_community.items():
        same = [k for k, c in communities.items() if c == communities.get(key)]
        assert all(by_community[k] == colour for k in same)
    assert await page.evaluate("document.querySelectorAll('.legend-communities li').length") >= 3
    await page.screenshot(OUTPUT / "graph-communities.png")
    await page.click("#community-list button")
    await page.wait_for(f"document.querySelector('#details h3')?.textContent === {js(titles[0])}")
    report = await page.evaluate("document.getElementById('details').textContent")
    assert "Findings" in report and "Members" in report
    members = set(
        await page.evaluate(
            "[...document.querySelectorAll('#details .members button')].map(b => b.dataset.key)"
        )
    )
    colours = await page.evaluate(f"{VIEW}.colours()")
    assert members & colours.keys() and all(colours[k] != DIMMED for k in members & colours.keys())
    assert {k for k, c in colours.items() if c != DIMMED} <= members
    assert any(c == DIMMED for c in colours.values())


async def check_search_and_hover(page: Page) -> None:
    await page.type("#entity-query", "Tern S")
    await page.wait_for(
        "document.querySelector('#entity-hits-list [data-key=\"tern s3\"]') !== null"
    )
    focus = await page.wait_for(f"{VIEW}.focus && [...{VIEW}.focus]")
    assert "tern s3" in focus and all("tern s" in k for k in focus)
    await page.type("#entity-query", "")
    await page.evaluate("document.getElementById('entity-query').dispatchEvent(new Event('input'))")
    await page.wait_for(f"{VIEW}.focus === null")
    middles = await page.evaluate(EDGE_MIDDLES)
    assert middles
    # The relation under the pointer (another may cross the middle of the one aimed at; a
    # middle may fall under a label, so the first few candidates are tried).
    hovered = None
    for middle in middles[:5]:
        await page.hover_at(middle["x"] - 1, middle["y"] - 1)
        await page.hover_at(middle["x"], middle["y"])
        try:
            hovered = await page.wait_for(f"{VIEW}.hoveredEdge", timeout_s=3)
            break
        except BrowserError:
            continue
    assert hovered is not None, f"no relation found under the pointer at {middles[:5]}"
    shown = await page.evaluate(f"{VIEW}.renderer.getEdgeDisplayData({js(hovered)})")
    keywords = await page.evaluate(f"{VIEW}.graph.getEdgeAttribute({js(hovered)}, 'keywords')")
    assert shown["label"] == keywords and keywords and shown["forceLabel"]
    await page.screenshot(OUTPUT / "graph-edge-hover.png")


async def test_the_graph_explorer_draws_legibly_and_shows_communities(
    demo_http_server: ServeProcess, tmp_path: Path
) -> None:
    async with console(demo_http_server, tmp_path, "chromium-graph.log", "graph") as page:
        await open_best_connected(page)
        await page.screenshot(OUTPUT / "graph-depth-2.png")
        await check_labels_and_legend(page)
        await check_type_filter(page)
        await check_communities(page)
        await check_search_and_hover(page)
        await check_chinese_label(page)  # may open another entity
        assert page.errors == []
