// A beforeTool callback answering with the user's confirmation of the call
// (confirm_test.go: TestBeforeToolConfirmation).

import { callback } from "adkhost";

callback("beforeTool", ({ context }) => {
  const c = context.toolConfirmation;
  if (!c) return undefined;
  return { confirmed: c.confirmed, hint: c.hint, by: "callback" };
});
