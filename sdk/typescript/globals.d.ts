// What QuickJS-ng gives a module beyond ES2023 (and what the SDK adds):
// btoa/atob, the Annex B escape/unescape, and console through the host's log.
declare function btoa(s: string): string;
declare function atob(s: string): string;
declare function escape(s: string): string;
declare function unescape(s: string): string;
declare const console: {
  log(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
  debug(...args: unknown[]): void;
};
