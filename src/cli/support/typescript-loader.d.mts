/** Registers tsx's CommonJS and ES module hooks, once per process. */
export function registerTypeScriptLoader(): void;
