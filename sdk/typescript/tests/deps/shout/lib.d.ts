export function shout(s: string): string;
