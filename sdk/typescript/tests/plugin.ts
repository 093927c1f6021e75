// A plugin as adk-js writes one: a BasePlugin subclass whose overridden
// methods become the module's hooks; an exported instance is found without
// registering it (context_test.go: TestCallbacksAndPlugin).

import { BasePlugin, type InvocationContext } from "adkhost";

class Shout extends BasePlugin {
  async beforeToolCallback({ toolArgs }: { toolArgs: Record<string, any> }) {
    if (typeof toolArgs.note === "string") toolArgs.note = toolArgs.note.toUpperCase();
    return undefined;
  }

  beforeRunCallback({ invocationContext }: { invocationContext: InvocationContext }) {
    console.log(`run of ${invocationContext.session.userId} starts`);
    return undefined;
  }
}

export const shout = new Shout("shout");
