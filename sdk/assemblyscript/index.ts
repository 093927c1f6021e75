// The package entry asc resolves for `import … from "adkhost-as"`
// (node_modules/adkhost-as/index.ts): the SDK. The ABI exports are a
// separate import, "adkhost-as/assembly/exports", re-exported by the guest.
export * from "./assembly/index";
