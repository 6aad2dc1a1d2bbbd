"use strict";
// Which `Host` a dashboard answers to. A page on a rebinding domain
// (attacker.example resolving to 127.0.0.1) is same-origin with a dashboard
// that answers any Host, so it could read the CSRF token and act: by default
// a dashboard answers only to loopback names, on any port.

/**
 * A Host header value (RFC 3986 host and optional port), lowercased:
 * `{ name, port }`, or null when it is not one.
 * @param {string} value
 * @returns {{ name: string, port: string | undefined } | null}
 */
function parseHost(value) {
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9\-._~!$&'()*+,;=%]+)(?::(\d{0,5}))?$/i.exec(value);
  if (!m) return null;
  return { name: m[1].toLowerCase(), port: m[2] || undefined };
}

/**
 * A loopback host name or address (`::1` bare, as `--host` takes it, or
 * bracketed, as a Host header carries it).
 * @param {string} name
 */
function isLoopback(name) {
  const n = name.toLowerCase();
  return n === "localhost" || n === "::1" || n === "[::1]" || /^127(\.\d{1,3}){3}$/.test(n);
}

/**
 * The test a request's Host must pass: `true` answers any host; a list
 * answers its entries (`name` on any port, `name:port` on that port only);
 * absent, loopback names on any port.
 * @param {string[] | true | undefined} allowed
 * @returns {(host: string) => boolean}
 */
function hostRule(allowed) {
  if (allowed === true) return () => true;
  if (allowed === undefined) {
    return (host) => {
      const parsed = parseHost(host);
      return parsed !== null && isLoopback(parsed.name);
    };
  }
  if (!Array.isArray(allowed))
    throw new TypeError("createDashboard: allowedHosts must be an array of host names, or true for any host");
  const entries = allowed.map((entry) => {
    const parsed = typeof entry === "string" ? parseHost(entry) : null;
    if (parsed === null)
      throw new TypeError(`createDashboard: allowedHosts entry is not a host name: ${JSON.stringify(entry)}`);
    return parsed;
  });
  return (host) => {
    const parsed = parseHost(host);
    return (
      parsed !== null && entries.some((e) => e.name === parsed.name && (e.port === undefined || e.port === parsed.port))
    );
  };
}

module.exports = { parseHost, isLoopback, hostRule };
