"use strict";
// cairnq/testing, the CommonJS entry (docs/api.md, "Testing").

const { createTestKit, TestKit, TestClock, DrainLimitError } = require("./lib/testing.js");

module.exports = { createTestKit, TestKit, TestClock, DrainLimitError };
