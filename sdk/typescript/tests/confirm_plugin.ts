// A plugin's beforeToolCallback answering with the user's confirmation of
// the call (confirm_test.go: TestBeforeToolConfirmation).

import { BasePlugin, type Context } from "adkhost";

class SeeConfirmation extends BasePlugin {
  beforeToolCallback({ toolContext }: { toolContext: Context }) {
    const c = toolContext.toolConfirmation;
    if (!c) return undefined;
    return { confirmed: c.confirmed, hint: c.hint, by: "plugin" };
  }
}

export const seeConfirmation = new SeeConfirmation("see_confirmation");
