"use strict";
// Preloaded by bench/telemetry.mjs (`--require`): `@opentelemetry/api` cannot
// be resolved, as in an application that does not install it.
const Module = require("node:module");

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === "@opentelemetry/api") {
    throw Object.assign(new Error(`Cannot find module '${request}'`), { code: "MODULE_NOT_FOUND" });
  }
  return resolve.call(this, request, ...rest);
};
