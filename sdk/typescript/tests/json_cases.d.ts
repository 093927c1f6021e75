export function run(print: (line: string) => void): void;
