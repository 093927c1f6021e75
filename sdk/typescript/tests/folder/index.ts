// A folder module: index.ts imports a sibling file and an npm-style
// package from a --path directory (context_test.go:
// TestFolderWithDependencies).

import { tool } from "adkhost";
import { shout } from "shout";
import { greeting } from "./greeting";

tool({
  name: "hi",
  description: "Greets loudly.",
  parameters: { type: "object", properties: { name: { type: "string" } } },
}, ({ name }: { name: string }) => shout(greeting(name)));

tool({ name: "rand", description: "A random number." }, () => Math.random());
