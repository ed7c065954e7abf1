/** Registers tsx's CommonJS and ES module hooks, once per process (tsx is imported then). */
export function registerTypeScriptLoader(): Promise<void>;
