// Every write another site's page can send to the port (uploads included): run by test_http_cross_site.py in
// a page of another origin, `target` being the port's origin. Returns how each fetch ended.
async (target) => {
  const publish = (id) => JSON.stringify({workspace: "default", documents: [{docId: id, content: "forged"}]});
  const remove = JSON.stringify({workspace: "default", docIds: ["victim.md"]});
  const file = new File(["Forged text."], "forged-upload.md", {type: "text/markdown"});
  const upload = () => {
    const form = new FormData();
    form.append("workspace", "default");
    form.append("file", file);
    return form;
  };
  const tries = [
    fetch(`${target}/v1/documents`, {method: "POST", headers: {"content-type": "text/plain"}, body: publish("forged-text")}),
    fetch(`${target}/v1/documents`, {method: "POST", mode: "no-cors", body: publish("forged-no-cors")}),
    fetch(`${target}/v1/documents/delete`, {method: "POST", mode: "no-cors", body: remove}),
    fetch(`${target}/v1/documents/delete`, {method: "POST", mode: "no-cors"}),
    fetch(`${target}/v1/documents`, {method: "POST", headers: {"content-type": "application/json"}, body: publish("forged-json")}),
    fetch(`${target}/v1/documents/upload`, {method: "POST", mode: "no-cors", body: upload()}),
    fetch(`${target}/v1/documents/upload`, {method: "POST", headers: {"x-ragstream-upload": "1"}, body: upload()}),
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
  // A multipart form, as a user's click on another site's page would post it, with a file.
  const frame = Object.assign(document.createElement("iframe"), {name: "sink-upload"});
  const form = Object.assign(document.createElement("form"), {method: "POST", action: `${target}/v1/documents/upload`, enctype: "multipart/form-data", target: frame.name});
  const picked = Object.assign(document.createElement("input"), {type: "file", name: "file"});
  const chosen = new DataTransfer();
  chosen.items.add(file);
  picked.files = chosen.files;
  form.append(picked);
  document.body.append(frame, form);
  form.submit();
  const settled = await Promise.allSettled(tries);
  return settled.map((s) => s.status === "fulfilled" ? s.value.type : `rejected: ${s.reason}`);
}
