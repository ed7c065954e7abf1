export declare const DURABLE_START: string[];
export declare class DurableNodeFS {
  constructor(dataDir: string, sync?: (fd: number) => void);
}
export declare function embeddedFsync(env?: NodeJS.ProcessEnv): boolean;
