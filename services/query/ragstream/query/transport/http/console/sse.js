// Server-sent events read as the HTML specification says: a line ends at CRLF, LF or CR and
// nowhere else (U+2028 and its kind are text), an empty line ends an event, `data` lines
// join with LF, one space after a field's colon is dropped, a line starting with a colon is
// a comment, and an event the stream ends before its empty line is dropped.
export class EventParser {
  // onEvent(name, data) is called for each complete event, in order.
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buffer = "";
    this.name = "";
    this.data = null;
  }

  // Feeds the next piece of decoded text; `last` says no more follows.
  push(text, last = false) {
    this.buffer += text;
    const lineEnd = /\r\n|\r|\n/g;
    let start = 0;
    for (let found; (found = lineEnd.exec(this.buffer)); ) {
      // A CR ending the text so far may be the first half of a CRLF still on its way.
      if (!last && found[0] === "\r" && found.index === this.buffer.length - 1) break;
      this.line(this.buffer.slice(start, found.index));
      start = lineEnd.lastIndex;
    }
    this.buffer = this.buffer.slice(start);
  }

  line(text) {
    if (text === "") {
      if (this.data !== null) this.onEvent(this.name || "message", this.data.join("\n"));
      this.name = "";
      this.data = null;
      return;
    }
    const colon = text.indexOf(":");
    if (colon === 0) return;
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? "" : text.slice(colon + 1).replace(/^ /, "");
    if (field === "event") this.name = value;
    else if (field === "data") (this.data ??= []).push(value);
  }
}
