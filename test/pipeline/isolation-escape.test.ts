import { BACKENDS } from "../support/backends.ts";
import { describeEscapeProbe } from "./escape-probe-suite.ts";

// The escape probe on the default runtime: bubblewrap sandboxes (a uid each, as root) and control groups.
describeEscapeProbe({ name: "local", args: () => [], announces: '"sandbox":"own-user"', initIsOwn: false, ownBuildAtHostPath: true }, BACKENDS);
