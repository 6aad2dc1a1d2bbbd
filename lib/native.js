"use strict";
// The compiled addon, through the platform loader napi-rs generates.
module.exports = require("../binding.js");
