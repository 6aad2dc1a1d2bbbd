// cairnq/testing, the ESM entry: the CommonJS entry's objects, so instanceof holds across both.
import testing from "./testing.js";

export const { createTestKit, TestKit, TestClock, DrainLimitError } = testing;
