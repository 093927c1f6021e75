// A plugin as adk-js writes one: a BasePlugin subclass whose overridden
// methods become the module's hooks; an exported instance is found without
// registering it (context_test.go: TestCallbacksAndPlugin).

import { BasePlugin, type CallbackContext, type Content, type InvocationContext } from "adkhost";

class Shout extends BasePlugin {
  // Rewrites the user's message before anything sees it.
  onUserMessageCallback({ userMessage }: { invocationContext: InvocationContext; userMessage: Content }) {
    const text = userMessage.parts?.[0]?.text ?? "";
    if (!text.startsWith("lower:")) return undefined;
    return { role: "user", parts: [{ text: text.slice("lower:".length).toLowerCase() }] };
  }

  beforeRunCallback({ invocationContext }: { invocationContext: InvocationContext }) {
    console.log(`run of ${invocationContext.session.userId} starts`);
    return undefined;
  }

  async beforeAgentCallback({ agent, callbackContext }: { agent: { name?: string }; callbackContext: CallbackContext }) {
    callbackContext.log(`agent ${agent.name} starts`);
    return undefined;
  }

  async beforeToolCallback({ toolArgs }: { toolArgs: Record<string, any> }) {
    if (typeof toolArgs.note === "string") toolArgs.note = toolArgs.note.toUpperCase();
    return undefined;
  }

  // Marks every event it sees.
  onEventCallback({ event }: { event: Record<string, any> }) {
    return { ...event, customMetadata: { ...(event.customMetadata ?? {}), seen_by: this.name } };
  }

  afterRunCallback({ invocationContext }: { invocationContext: InvocationContext }) {
    console.log(`run ${invocationContext.invocationId} done`);
  }
}

export const shout = new Shout("shout");
