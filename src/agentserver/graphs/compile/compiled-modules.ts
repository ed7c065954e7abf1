import { pathToFileURL } from "node:url";

/**
 * Where this process imports the project's modules from: their compiled JavaScript when
 * the project was compiled (decision 0056), else the files themselves. Messages and
 * everything else keep naming the original files.
 */
const compiled = new Map<string, string>();

export function useCompiledModules(modules: Map<string, string>): void {
  compiled.clear();
  for (const [original, output] of modules) compiled.set(original, output);
}

export function forgetCompiledModules(): void {
  compiled.clear();
}

/** The URL to import for a module the config names. */
export function moduleUrl(file: string): string {
  return pathToFileURL(compiled.get(file) ?? file).href;
}
