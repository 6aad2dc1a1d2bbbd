// EventLoopBlocked's fields are readonly.
import { EventLoopBlocked } from "cairnq";

const err = new EventLoopBlocked(10, 20, 30);
err.lateMs = 0; // @expect-error-here
