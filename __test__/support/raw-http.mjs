// HTTP written byte for byte on a TCP socket, for requests fetch() will not
// send (TRACE, an absolute-form target, a Host with a space, a body that
// trickles in) and for reading an answer exactly as the server wrote it.
import net from "node:net";

/**
 * Write `raw` to host:port and read until the server closes the connection
 * (or `timeoutMs` passes): `{ status, headers, body, raw, closed }`; `status`
 * is null when nothing came back.
 */
export function rawRequest(port, raw, { host = "127.0.0.1", timeoutMs = 15_000 } = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host, () => socket.write(raw));
    let data = Buffer.alloc(0);
    let settled = false;
    const finish = (closed) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseResponse(data.toString("latin1")), closed });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on("data", (chunk) => {
      data = Buffer.concat([data, chunk]);
    });
    socket.on("close", () => finish(true));
    socket.on("error", (err) => {
      // A reset after the answer still leaves the answer to read.
      if (data.length === 0 && err.code !== "ECONNRESET") {
        settled = true;
        clearTimeout(timer);
        reject(err);
      }
    });
  });
}

/** One HTTP/1.1 request in origin form with `Connection: close`. */
export function requestText(method, target, { host, headers = {}, body } = {}) {
  const lines = [`${method} ${target} HTTP/1.1`];
  if (host !== undefined) lines.push(`Host: ${host}`);
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  lines.push("Connection: close", "", body ?? "");
  return lines.join("\r\n");
}

/** @param {string} text */
function parseResponse(text) {
  const end = text.indexOf("\r\n\r\n");
  const head = end < 0 ? text : text.slice(0, end);
  const [statusLine, ...headerLines] = head.split("\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "");
  const headers = {};
  for (const line of headerLines) {
    const i = line.indexOf(":");
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: m ? Number(m[1]) : null, headers, body: end < 0 ? "" : text.slice(end + 4), raw: text };
}

/** The body of an answer of `rawRequest`, its chunked transfer coding undone. */
export function decodedBody(answer) {
  if (!/chunked/i.test(answer.headers["transfer-encoding"] ?? "")) return answer.body;
  const bytes = Buffer.from(answer.body, "latin1");
  const parts = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf("\r\n", at);
    const size = parseInt(bytes.subarray(at, lineEnd).toString("latin1"), 16);
    if (!(size > 0)) break;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts).toString("utf8");
}
