"use strict";
// The database a front end names on screen (`cairnq top`'s header, `cairnq
// ui`'s banner), without its passwords.

/**
 * A DSN without its passwords: the user part's and a `password=` (or
 * `sslpassword=`) query parameter's. The user part ends at the authority's
 * last `@`, as the core reads it (postgres/dsn.rs), so a raw `@` in a
 * password is hidden with the rest of it.
 * @param {string} db
 */
function redact(db) {
  if (!/^postgres(?:ql)?:\/\//i.test(db)) return db;
  return db
    .replace(/^(postgres(?:ql)?:\/\/[^:/?#]*:)[^/?#]*@/i, "$1***@")
    .replace(/([?&](?:ssl)?password=)[^&#]*/gi, "$1***");
}

module.exports = { redact };
