import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Seconds each file took in a CI run (only those of 5 s or more); `npm run test:durations` refreshes it. */
const DURATIONS: Record<string, number> = JSON.parse(readFileSync(new URL("./file-durations.json", import.meta.url), "utf8"));
/** A file not in the table: new, or under 5 s. */
const UNKNOWN_SECONDS = 5;

/**
 * The longest files start first. Vitest's own order needs its results cache, which a
 * fresh clone (CI) lacks: it then starts the largest files first, and a short file of
 * 3 minutes (docker-runtime) can start last, the other worker idle meanwhile. With the
 * longest first, two workers end within about one short file of each other.
 */
export class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const bySize = await super.sort(files);
    const seconds = (spec: TestSpecification) => DURATIONS[relative(spec.project.config.root, spec.moduleId)] ?? UNKNOWN_SECONDS;
    // Array.prototype.sort is stable: files of equal estimate keep vitest's order.
    return bySize.sort((a, b) => seconds(b) - seconds(a));
  }
}
