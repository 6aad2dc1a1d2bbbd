"use strict";
// Path segments of a route (a task id, a schedule name), percent-decoded; a
// malformed escape is the client's error (400), never the server's.

const { HttpError } = require("./responses.js");

/**
 * @param {string} segment the raw path segment
 * @param {string} what what the segment names, for the error
 * @returns {string}
 */
function decodeSegment(segment, what) {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, `malformed percent-escape in the ${what}: ${segment}`);
  }
}

module.exports = { decodeSegment };
