// Every write another site's page can send to the port: run by test_http_cross_site.py in
// a page of another origin, `target` being the port's origin. Returns how each fetch ended.
async (target) => {
  const publish = (id) => JSON.stringify({workspace: "default", documents: [{docId: id, content: "forged"}]});
  const remove = JSON.stringify({workspace: "default", docIds: ["victim.md"]});
  const tries = [
    fetch(`${target}/v1/documents`, {method: "POST", headers: {"content-type": "text/plain"}, body: publish("forged-text")}),
    fetch(`${target}/v1/documents`, {method: "POST", mode: "no-cors", body: publish("forged-no-cors")}),
    fetch(`${target}/v1/documents/delete`, {method: "POST", mode: "no-cors", body: remove}),
    fetch(`${target}/v1/documents/delete`, {method: "POST", mode: "no-cors"}),
    fetch(`${target}/v1/documents`, {method: "POST", headers: {"content-type": "application/json"}, body: publish("forged-json")}),
  ];
  navigator.sendBeacon(`${target}/v1/documents/delete`, remove);
  // A text/plain form sends name=value: the JSON is split so that the = falls in a string.
  const forms = [
    ["text/plain", "/v1/documents", '{"workspace":"default","documents":[{"docId":"forged-form","content":"x', 'y"}]}'],
    ["text/plain", "/v1/documents/delete", '{"workspace":"default","docIds":["victim.md","x', '"]}'],
    ["application/x-www-form-urlencoded", "/v1/documents/delete", "docIds", "victim.md"],
  ];
  forms.forEach(([enctype, path, name, value], index) => {
    const frame = Object.assign(document.createElement("iframe"), {name: `sink${index}`});
    const form = Object.assign(document.createElement("form"), {method: "POST", action: target + path, enctype, target: frame.name});
    form.append(Object.assign(document.createElement("input"), {name, value}));
    document.body.append(frame, form);
    form.submit();
  });
  const settled = await Promise.allSettled(tries);
  return settled.map((s) => s.status === "fulfilled" ? s.value.type : `rejected: ${s.reason}`);
}
