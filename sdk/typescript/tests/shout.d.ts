// The types of tests/deps/shout, for tsc (TestTypes) only: the build finds
// the package itself with --path tests/deps.
declare module "shout" {
  export function shout(s: string): string;
}
