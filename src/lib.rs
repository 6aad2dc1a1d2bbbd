//! Node-API bindings: thin wrappers that hand JS calls to `cairnq-core`.
