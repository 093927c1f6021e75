// A pure package, as npm would install it.
export function shout(s) {
  return s.toUpperCase() + "!";
}
