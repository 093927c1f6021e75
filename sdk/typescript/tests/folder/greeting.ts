export function greeting(name: string): string {
  return `hello ${name}`;
}
