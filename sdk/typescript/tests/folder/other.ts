// Not imported by index.ts: a folder with index.ts builds from it.
export const unused = true;
